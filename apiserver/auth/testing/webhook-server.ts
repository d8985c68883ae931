// Test support: a SubjectAccessReview webhook served over HTTPS on 127.0.0.1 that requires a client certificate of its
// own CA, and the kubeconfig file (CA, client certificate and key inline) that reaches it.

import { writeFileSync } from 'node:fs'
import { createServer, type Server } from 'node:https'
import type { AddressInfo } from 'node:net'
import type { TLSSocket } from 'node:tls'
import { join } from 'node:path'
import { createCa, issueCertificate } from '../../pki/certs.js'

export interface Seen { body: Record<string, any>; clientCN: string }
export type Answer = (body: Record<string, any>) => { status?: number; body?: unknown; delayMs?: number; raw?: string }

/** An HTTPS webhook that requires a client certificate of the test CA; `answer` decides each review. */
export async function startWebhook (dir: string): Promise<{ kubeconfig: string; seen: Seen[]; setAnswer: (a: Answer) => void; server: Server }> {
  const ca = await createCa('webhook-test-ca')
  const serving = await issueCertificate(ca, { subject: { commonName: '127.0.0.1' }, usage: 'server', hosts: ['127.0.0.1'] })
  const client = await issueCertificate(ca, { subject: { commonName: 'orch-apiserver' }, usage: 'client' })
  const seen: Seen[] = []
  let answer: Answer = () => ({ body: { status: { allowed: false } } })
  const server = createServer({ key: serving.keyPem, cert: serving.certPem, ca: ca.certPem, requestCert: true, rejectUnauthorized: true }, (req, res) => {
    let text = ''
    req.on('data', (c: Buffer) => { text += c.toString() })
    req.on('end', () => {
      const body = JSON.parse(text) as Record<string, any>
      seen.push({ body, clientCN: (req.socket as TLSSocket).getPeerCertificate().subject.CN as string })
      const a = answer(body)
      setTimeout(() => {
        if (res.destroyed) return
        res.statusCode = a.status ?? 200
        res.setHeader('content-type', 'application/json')
        res.end(a.raw ?? JSON.stringify({ apiVersion: body.apiVersion, kind: 'SubjectAccessReview', ...(a.body as object) }))
      }, a.delayMs ?? 0)
    })
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  const b64 = (s: string): string => Buffer.from(s).toString('base64')
  const kubeconfig = join(dir, 'webhook.kubeconfig')
  writeFileSync(kubeconfig, `apiVersion: v1
kind: Config
clusters:
- name: webhook
  cluster:
    server: https://127.0.0.1:${(server.address() as AddressInfo).port}/authorize
    certificate-authority-data: ${b64(ca.certPem)}
users:
- name: apiserver
  user:
    client-certificate-data: ${b64(client.certPem)}
    client-key-data: ${b64(client.keyPem)}
contexts:
- name: webhook
  context: {cluster: webhook, user: apiserver}
current-context: webhook
`)
  return { kubeconfig, seen, setAnswer: (a) => { answer = a }, server }
}
