// The proxy subresources (nodes/proxy, pods/proxy, services/proxy): admitted as a CONNECT, then the request is
// forwarded with undici and the answer streamed back.
//
// Towards orchlets the API server presents its orchlet-client pair and checks their serving certificates against the
// cluster CA when it has one (as pods/log does); towards pods and services plain HTTP, or HTTPS without verification,
// as kube-apiserver's proxy does. Hop-by-hop headers and the client's credentials are not forwarded.

import type { IncomingMessage, ServerResponse } from 'node:http'
import { Agent, errors as undiciErrors } from '../client/undici-core.js'
import type { Dispatcher } from 'undici'
import type { TargetTls } from '../egress/egress.js'
import { methodNotAllowed, pathNotFound, StatusError } from '../errors/status-error.js'
import type { Registry, RequestContext } from '../registry/types.js'
import type { OrchletTls } from './pod-log.js'
import type { RequestInfo } from './request-info.js'
import { nodeTarget, podTarget, serviceTarget, splitProxyName, targetUrl, type ProxyTarget } from './proxy-targets.js'
import { streamBody } from './stream-body.js'

export interface ProxyRequest {
  registry: Registry
  ctx: RequestContext
  info: RequestInfo
  url: URL
  req: IncomingMessage
  res: ServerResponse
}

export interface ResourceProxy {
  /** Whether this request is a proxy request this module serves. */
  handles(info: RequestInfo): boolean
  /** Forwards one request; throws StatusError before the answer starts. */
  serve(r: ProxyRequest): Promise<void>
  close(): Promise<void>
}

export interface ResourceProxyOptions {
  tls?: OrchletTls
  connectTimeoutMs?: number
  random?: () => number
  /** Makes the connection pools (the `cluster` egress selection); direct by default. */
  dispatcher?: (tls: TargetTls) => Dispatcher
}

const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-authenticate', 'proxy-authorization', 'te', 'trailer',
  'transfer-encoding', 'upgrade', 'host', 'authorization', 'impersonate-user', 'impersonate-group', 'impersonate-uid'])

function forwardHeaders (h: IncomingMessage['headers']): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {}
  for (const [k, v] of Object.entries(h)) {
    if (v === undefined || HOP_BY_HOP.has(k) || k.startsWith('impersonate-extra-')) continue
    out[k] = v
  }
  return out
}

const PROXIED = new Set(['nodes', 'pods', 'services'])
const PROXY_OPTIONS_KIND: Record<string, string> = { nodes: 'NodeProxyOptions', pods: 'PodProxyOptions', services: 'ServiceProxyOptions' }

/** The proxy path as the options carry it: decoded (request-info keeps it encoded for the upstream URL). */
function decodePath (p: string): string {
  try { return decodeURIComponent(p) } catch { return p }
}

function parsed (got: { bytes: Buffer } | Buffer): Record<string, unknown> {
  return JSON.parse((Buffer.isBuffer(got) ? got : got.bytes).toString('utf8')) as Record<string, unknown>
}

export function createResourceProxy (o: ResourceProxyOptions = {}): ResourceProxy {
  const connectTimeoutMs = o.connectTimeoutMs ?? 5000
  const random = o.random ?? Math.random
  const tls = o.tls ?? {}
  // Orchlets, pods and services are all the `cluster` egress class.
  const make = o.dispatcher ?? ((t: TargetTls): Dispatcher => new Agent({ connect: t, connectTimeout: connectTimeoutMs }))
  const orchlets = make({ ca: tls.caPem, cert: tls.certPem, key: tls.keyPem, rejectUnauthorized: tls.caPem !== undefined, timeout: connectTimeoutMs })
  const workloads = make({ rejectUnauthorized: false, timeout: connectTimeoutMs })

  async function locate (r: ProxyRequest): Promise<{ target: ProxyTarget; agent: Dispatcher }> {
    const { info, registry, ctx } = r
    const get = async (resource: string, namespace: string, name: string): Promise<Record<string, unknown>> => {
      const h = registry.handler('', info.version, resource)
      if (h === undefined) throw pathNotFound()
      return parsed(await h.get(ctx, namespace, name, {}))
    }
    if (info.resource === 'nodes') {
      const { name, port } = splitProxyName(info.name, false)
      return { target: nodeTarget(await get('nodes', '', name) as Parameters<typeof nodeTarget>[0], port), agent: orchlets }
    }
    if (info.resource === 'pods') {
      const { scheme, name, port } = splitProxyName(info.name, true)
      return { target: podTarget(await get('pods', info.namespace, name), scheme, port), agent: workloads }
    }
    const { scheme, name, port } = splitProxyName(info.name, true)
    const svc = await get('services', info.namespace, name)
    let eps: Record<string, unknown> | undefined
    try { eps = await get('endpoints', info.namespace, name) } catch (err) { if (!(err instanceof StatusError && err.code === 404)) throw err }
    return { target: serviceTarget(svc, eps, scheme, port, random), agent: workloads }
  }

  async function serve (r: ProxyRequest): Promise<void> {
    // Admission first (operation CONNECT, the v1 NodeProxyOptions / PodProxyOptions / ServiceProxyOptions with the
    // path after proxy/), as kube-apiserver's connecter runs it before locating the target.
    const { info } = r
    const path = decodePath((info.proxyPath ?? '').replace(/^\//, ''))
    const options: Record<string, unknown> = { kind: PROXY_OPTIONS_KIND[info.resource], apiVersion: 'v1', ...(path !== '' ? { path } : {}) }
    await r.registry.admitConnect(r.ctx, { group: '', version: info.version, resource: info.resource, subresource: 'proxy', namespace: info.namespace, name: info.name }, options)
    const { target, agent } = await locate(r)
    const url = targetUrl(target, r.info.proxyPath ?? '', r.url.search)
    const method = r.req.method ?? 'GET'
    const hasBody = method !== 'GET' && method !== 'HEAD' && method !== 'OPTIONS'
    const abort = new AbortController()
    const onClose = (): void => { if (!r.res.writableFinished) abort.abort() }
    r.res.on('close', onClose)
    let upstream: Awaited<ReturnType<Dispatcher['request']>>
    try {
      upstream = await agent.request({
        origin: new URL(url).origin,
        path: url.slice(new URL(url).origin.length),
        method: method as 'GET',
        headers: forwardHeaders(r.req.headers),
        body: hasBody ? r.req : undefined,
        signal: abort.signal,
        headersTimeout: 30_000,
        bodyTimeout: 0
      })
    } catch (err) {
      r.res.off('close', onClose)
      if (abort.signal.aborted) return
      const e = err as { message?: string; cause?: { message?: string } }
      const why = err instanceof undiciErrors.ConnectTimeoutError ? 'connect timeout' : (e.cause?.message ?? e.message ?? String(err))
      throw new StatusError(503, 'ServiceUnavailable', `error trying to reach ${r.info.resource.replace(/s$/, '')}: ${why}`)
    }
    const headers: Record<string, string | string[]> = {}
    for (const [k, v] of Object.entries(upstream.headers)) if (v !== undefined && !HOP_BY_HOP.has(k)) headers[k] = v
    r.res.writeHead(upstream.statusCode, headers)
    await streamBody(upstream.body, r.res, onClose)
  }

  return {
    handles: info => info.proxyPath !== undefined && info.subresource === 'proxy' && info.group === '' && PROXIED.has(info.resource),
    async serve (r) {
      const { info } = r
      if ((info.resource === 'nodes') !== (info.namespace === '')) throw pathNotFound()
      if (info.verb === 'list' || info.verb === 'watch') throw methodNotAllowed(r.req.method ?? 'GET', `${info.resource}/proxy`)
      await serve(r)
    },
    close: async () => { await Promise.all([orchlets.close(), workloads.close()]) }
  }
}
