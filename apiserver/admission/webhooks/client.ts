// Calling one admission webhook: where it is (url, or a Service resolved to an endpoint address), TLS with its caBundle, the POST.

import { Agent, request } from '../../client/undici-core.js'
import type { Dispatcher } from 'undici'
import type { TargetTls } from '../../egress/egress.js'
import type { ApiClient, Obj } from '../../controllers/client/types.js'

export interface ClientConfig {
  url?: string
  service?: { namespace: string; name: string; path?: string; port?: number }
  caBundle?: string
}

/** Where to POST and the host name the server certificate must carry. */
export interface WebhookEndpoint { url: string; displayUrl: string; serverName?: string }

const MAX_ANSWER_BYTES = 3 * 1024 * 1024

/**
 * A Service's webhook is `https://<svc>.<ns>.svc:<port><path>`; the API server dials a ready address of the Service's
 * Endpoints (the port the service port targets) and verifies the certificate against `<svc>.<ns>.svc`, since orch
 * has no cluster DNS on the API server's host.
 */
export async function resolveEndpoint (c: ClientConfig, client: ApiClient | undefined): Promise<WebhookEndpoint> {
  if (c.url !== undefined) return { url: c.url, displayUrl: c.url }
  const s = c.service!
  const port = s.port ?? 443
  const host = `${s.name}.${s.namespace}.svc`
  const displayUrl = `https://${host}:${port}${s.path ?? ''}`
  if (client === undefined) throw new Error(`service "${s.namespace}/${s.name}" cannot be resolved`)
  const svc = await client.resource({ group: '', version: 'v1', resource: 'services', namespaced: true }).get(s.namespace, s.name)
  if (svc === undefined) throw new Error(`service "${s.namespace}/${s.name}" not found`)
  const sp = ((svc.spec as Obj | undefined)?.ports as Obj[] | undefined ?? []).find(p => p.port === port)
  if (sp === undefined) throw new Error(`service "${s.namespace}/${s.name}" has no port ${port}`)
  const at = (await endpointAddress(client, s.namespace, s.name, sp.name ?? '')) ?? (await sliceAddress(client, s.namespace, s.name, sp.name ?? ''))
  if (at === undefined) throw new Error(`service "${s.namespace}/${s.name}" has no ready endpoints`)
  return { url: `https://${at.ip.includes(':') ? `[${at.ip}]` : at.ip}:${at.port}${s.path ?? ''}`, displayUrl, serverName: host }
}

interface Address { ip: string; port: number }

/** A ready address of the Service's Endpoints with the port named as the service port. */
async function endpointAddress (client: ApiClient, namespace: string, name: string, portName: string): Promise<Address | undefined> {
  const eps = await client.resource({ group: '', version: 'v1', resource: 'endpoints', namespaced: true }).get(namespace, name)
  for (const subset of (eps?.subsets as Obj[] | undefined) ?? []) {
    const ports = (subset.ports as Obj[] | undefined) ?? []
    const addr = ((subset.addresses as Obj[] | undefined) ?? [])[0]
    const p = ports.find(x => (x.name ?? '') === portName)
    if (addr !== undefined && p !== undefined) return { ip: String(addr.ip), port: Number(p.port) }
  }
  return undefined
}

/** The same from the Service's EndpointSlices (label kubernetes.io/service-name), ready endpoints only. */
async function sliceAddress (client: ApiClient, namespace: string, name: string, portName: string): Promise<Address | undefined> {
  const slices = await client.resource({ group: 'discovery.orch.io', version: 'v1', resource: 'endpointslices', namespaced: true })
    .list(namespace, { labelSelector: `kubernetes.io/service-name=${name}` })
  for (const slice of slices.items) {
    const p = ((slice.ports as Obj[] | undefined) ?? []).find(x => (x.name ?? '') === portName)
    const ep = ((slice.endpoints as Obj[] | undefined) ?? []).find(x => x.conditions?.ready !== false && (x.addresses ?? []).length > 0)
    if (p !== undefined && ep !== undefined) return { ip: String(ep.addresses[0]), port: Number(p.port) }
  }
  return undefined
}

/** Makes the dispatcher of one CA bundle and server name: direct by default, or the `cluster` egress selection's. */
export type DispatcherFactory = (tls: TargetTls) => Dispatcher

const directDispatcher: DispatcherFactory = tls => new Agent({ connect: tls })

/** undici agents, one per CA bundle and server name, closed together. */
export class AgentCache {
  private readonly agents = new Map<string, Dispatcher>()

  constructor (private readonly make: DispatcherFactory = directDispatcher) {}

  get (caBundle: string | undefined, serverName: string | undefined): Dispatcher {
    const key = `${caBundle ?? ''}\n${serverName ?? ''}`
    let a = this.agents.get(key)
    if (a === undefined) {
      const ca = caBundle !== undefined && caBundle !== '' ? Buffer.from(caBundle, 'base64').toString('utf8') : undefined
      a = this.make({ ca, servername: serverName })
      this.agents.set(key, a)
    }
    return a
  }

  async close (): Promise<void> {
    const all = [...this.agents.values()]
    this.agents.clear()
    await Promise.all(all.map(async a => await a.destroy()))
  }
}

/** POSTs the review; resolves with the parsed answer of a 2xx, rejects with Go-like wording otherwise. */
export async function postReview (ep: WebhookEndpoint, dispatcher: Dispatcher, review: unknown, timeoutMs: number, extraHeaders: Record<string, string> = {}): Promise<unknown> {
  let res: Dispatcher.ResponseData
  try {
    res = await request(ep.url, {
      method: 'POST', body: JSON.stringify(review), dispatcher,
      headers: { ...extraHeaders, 'content-type': 'application/json', accept: 'application/json' },
      headersTimeout: timeoutMs, bodyTimeout: timeoutMs, signal: AbortSignal.timeout(timeoutMs)
    })
  } catch (err) {
    const e = err as Error & { name: string }
    const why = e.name === 'TimeoutError' || e.name === 'AbortError' || /timeout/i.test(e.name) ? 'context deadline exceeded' : e.message
    throw new Error(`failed to call webhook: Post "${ep.displayUrl}": ${why}`)
  }
  const chunks: Buffer[] = []
  let size = 0
  for await (const c of res.body) {
    size += (c as Buffer).length
    if (size > MAX_ANSWER_BYTES) { res.body.destroy(); throw new Error('received invalid webhook response: response too large') }
    chunks.push(c as Buffer)
  }
  const text = Buffer.concat(chunks).toString('utf8')
  if (res.statusCode < 200 || res.statusCode > 299) throw new Error(`failed to call webhook: the server responded with the status code ${res.statusCode} but did not return more information`)
  try { return JSON.parse(text) as unknown } catch { throw new Error('received invalid webhook response: malformed JSON') }
}
