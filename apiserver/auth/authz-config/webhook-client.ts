// A webhook's connection from its kubeconfig file (server, CA, client certificate, token) and the POST through undici.

import { readFile } from 'node:fs/promises'
import { dirname, isAbsolute, resolve } from 'node:path'
import { Agent, request } from '../../client/undici-core.js'
import type { Dispatcher } from 'undici'
import type { TargetTls } from '../../egress/egress.js'
import { parse as parseYaml } from 'yaml'
import { boundedText } from '../bounded-body.js'

/** Largest SubjectAccessReview answer read (1 MiB). */
const MAX_ANSWER_BYTES = 1 << 20

export interface WebhookTarget {
  server: string
  caPem?: string
  clientCertPem?: string
  clientKeyPem?: string
  token?: string
  insecureSkipTlsVerify?: boolean
}

type Named<K extends string> = Array<{ name?: string } & Record<K, Record<string, unknown> | undefined>>
interface Kubeconfig {
  clusters?: Named<'cluster'>
  users?: Named<'user'>
  contexts?: Named<'context'>
  'current-context'?: string
}

const str = (v: unknown): string | undefined => typeof v === 'string' && v !== '' ? v : undefined

/**
 * The cluster and user of the kubeconfig's current context (else its first context, else its first cluster and
 * user). Paths inside are relative to the file's directory; `*-data` fields hold base64 PEM.
 */
export async function loadWebhookTarget (path: string): Promise<WebhookTarget> {
  const fail = (why: string): Error => new Error(`invalid kubeconfig file ${JSON.stringify(path)}: ${why}`)
  let doc: Kubeconfig
  try { doc = (parseYaml(await readFile(path, 'utf8')) ?? {}) as Kubeconfig } catch (err) { throw fail((err as Error).message) }
  const ctxName = str(doc['current-context'])
  const ctx = ctxName !== undefined ? doc.contexts?.find(c => c.name === ctxName)?.context : doc.contexts?.[0]?.context
  if (ctxName !== undefined && ctx === undefined) throw fail(`context ${JSON.stringify(ctxName)} does not exist`)
  const pick = <K extends 'cluster' | 'user'>(list: Named<K> | undefined, key: K, name: unknown): Record<string, unknown> | undefined =>
    typeof name === 'string' ? list?.find(x => x.name === name)?.[key] : list?.[0]?.[key]
  const cluster = pick(doc.clusters, 'cluster', ctx?.cluster)
  const user = pick(doc.users, 'user', ctx?.user) ?? {}
  const server = str(cluster?.server)
  if (cluster === undefined || server === undefined) throw fail('no cluster with a server')
  const base = dirname(path)
  const readRelative = async (key: string, file: string): Promise<string> => {
    try { return await readFile(isAbsolute(file) ? file : resolve(base, file), 'utf8') } catch (err) { throw fail(`${key}: ${(err as Error).message}`) }
  }
  const fileOrData = async (fileKey: string, dataKey: string, from: Record<string, unknown>): Promise<string | undefined> => {
    const data = str(from[dataKey])
    if (data !== undefined) return Buffer.from(data, 'base64').toString('utf8')
    const file = str(from[fileKey])
    return file === undefined ? undefined : await readRelative(fileKey, file)
  }
  const tokenFile = str(user.tokenFile)
  const token = str(user.token) ?? (tokenFile === undefined ? undefined : (await readRelative('tokenFile', tokenFile)).trim())
  return {
    server,
    caPem: await fileOrData('certificate-authority', 'certificate-authority-data', cluster),
    clientCertPem: await fileOrData('client-certificate', 'client-certificate-data', user),
    clientKeyPem: await fileOrData('client-key', 'client-key-data', user),
    token,
    insecureSkipTlsVerify: cluster['insecure-skip-tls-verify'] === true
  }
}

/** A non-2xx answer. */
export class WebhookStatusError extends Error {
  override readonly name = 'WebhookStatusError'
  constructor (readonly statusCode: number, message: string) { super(message) }
}

export interface WebhookClient {
  /** POSTs `body` as JSON; resolves with the parsed JSON answer of a 2xx, rejects otherwise or after `timeoutMs`. */
  post(body: unknown, timeoutMs: number): Promise<unknown>
  close(): Promise<void>
}

/** `dispatcher` makes the connection pool (the `controlplane` egress selection); direct by default. */
export function createWebhookClient (t: WebhookTarget, dispatcher?: (tls: TargetTls) => Dispatcher): WebhookClient {
  const tls = { ca: t.caPem, cert: t.clientCertPem, key: t.clientKeyPem, rejectUnauthorized: t.insecureSkipTlsVerify !== true }
  const agent: Dispatcher = dispatcher?.(tls) ?? new Agent({ connect: tls })
  return {
    async post (body, timeoutMs) {
      const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' }
      if (t.token !== undefined) headers.authorization = `Bearer ${t.token}`
      const res = await request(t.server, {
        method: 'POST', body: JSON.stringify(body), headers, dispatcher: agent,
        headersTimeout: timeoutMs, bodyTimeout: timeoutMs, signal: AbortSignal.timeout(timeoutMs)
      })
      const text = await boundedText(res.body, MAX_ANSWER_BYTES)
      if (res.statusCode < 200 || res.statusCode > 299) throw new WebhookStatusError(res.statusCode, `the webhook answered status ${res.statusCode}: ${text.slice(0, 200)}`)
      try { return JSON.parse(text) as unknown } catch { throw new Error('the webhook answered malformed JSON') }
    },
    // Requests still under way are aborted: a hanging webhook must not hold up the server's shutdown.
    close: async () => { await agent.destroy() }
  }
}
