// Test fixtures of admission webhooks: a real HTTPS webhook server (certificate from a test CA) answering AdmissionReviews.

import type { IncomingHttpHeaders } from 'node:http'
import { createServer, type Server } from 'node:https'
import type { AddressInfo } from 'node:net'
import { createCa, issueCertificate, type CertificateAuthority } from '../../pki/certs.js'
import type { Test } from 'tap'
import { openFixture, silentLogger, type Fixture } from '../../registry/testing.js'
import type { SandboxPool } from '../../../sandbox/pool.js'
import type { Authorizer } from '../../auth/types.js'
import { createMutatingWebhookPlugin, createValidatingWebhookPlugin, type WebhookPluginLifecycle } from './plugins.js'

export type Review = { request: Record<string, any> }
export type Answer = Record<string, unknown>

export interface WebhookServer {
  url: string
  port: number
  /** Every review received, in order. */
  reviews: Review[]
  /** The HTTP headers of each review, in the same order. */
  headers: IncomingHttpHeaders[]
  caBundle: string
  close(): Promise<void>
}

export async function testCa (): Promise<CertificateAuthority> { return await createCa('webhook-test-ca') }

/** A server on 127.0.0.1:0 whose certificate covers `hosts`; `answer` makes the `response` (uid is filled in). */
export async function startWebhookServer (ca: CertificateAuthority, answer: (r: Review, path: string) => Answer | Promise<Answer>, hosts = ['127.0.0.1']): Promise<WebhookServer> {
  const pair = await issueCertificate(ca, { subject: { commonName: hosts[0] }, usage: 'server', hosts })
  const reviews: Review[] = []
  const headers: IncomingHttpHeaders[] = []
  const server: Server = createServer({ cert: pair.certPem, key: pair.keyPem }, (req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      void (async () => {
        const review = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Review
        reviews.push(review)
        headers.push(req.headers)
        const response = { uid: review.request.uid, ...await answer(review, req.url ?? '') }
        res.setHeader('content-type', 'application/json')
        res.end(JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response }))
      })().catch(() => { res.statusCode = 500; res.end() })
    })
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as AddressInfo).port
  return {
    url: `https://127.0.0.1:${port}/`,
    port,
    reviews,
    headers,
    caBundle: Buffer.from(ca.certPem).toString('base64'),
    async close () { server.closeAllConnections(); await new Promise<void>(resolve => server.close(() => resolve())) }
  }
}

/** A JSONPatch answer as a mutating webhook sends it. */
export function patchAnswer (ops: unknown[]): Answer {
  return { allowed: true, patchType: 'JSONPatch', patch: Buffer.from(JSON.stringify(ops)).toString('base64') }
}

/** A registry fixture with both webhook plugins in its admission chain, started, and stopped with the test. */
export interface WebhookEnv { fx: Fixture; mutating: WebhookPluginLifecycle; validating: WebhookPluginLifecycle }

export async function webhookEnv (t: Test, pool: SandboxPool, authorizer?: Authorizer): Promise<WebhookEnv> {
  const mutating = createMutatingWebhookPlugin({ evaluator: pool, logger: silentLogger, authorizer })
  const validating = createValidatingWebhookPlugin({ evaluator: pool, logger: silentLogger, authorizer })
  const fx = await openFixture({ mutatingAdmission: [mutating], admission: [validating], webhookExpressions: pool })
  await mutating.start(fx.registry)
  await validating.start(fx.registry)
  t.teardown(async () => { await mutating.stop(); await validating.stop(); await fx.close() })
  return { fx, mutating, validating }
}
