// The pods/log subresource: validates PodLogOptions, picks the container, and streams the log from the pod's orchlet.
//
// As kube-apiserver: with a CA for orchlets (--kubelet-certificate-authority; `orch up` gives its cluster CA) the
// orchlet's serving certificate is verified; without one it is not (orchlets may serve a self-signed pair), so the
// connection is encrypted but the node unauthenticated. The proxy presents the API server's orchlet-client pair.

import type { IncomingMessage, ServerResponse } from 'node:http'
import { Agent, errors as undiciErrors, request } from '../client/undici-core.js'
import type { Dispatcher } from 'undici'
import type { TargetTls } from '../egress/egress.js'
import { badRequest, invalid, StatusError, type StatusCause } from '../errors/status-error.js'
import type { Registry, RequestContext } from '../registry/types.js'
import { parseBoolean } from './request-context.js'
import { streamBody } from './stream-body.js'

/** The query of GET .../pods/{name}/log, as Kubernetes' core/v1 PodLogOptions. */
export interface PodLogOptions {
  container?: string
  follow: boolean
  previous: boolean
  timestamps: boolean
  tailLines?: number
  limitBytes?: number
  sinceSeconds?: number
  /** RFC 3339, normalised to second precision with Z. */
  sinceTime?: string
  insecureSkipTLSVerifyBackend: boolean
}

function parseInt64 (q: URLSearchParams, name: string): number | undefined {
  const v = q.get(name)
  if (v === null || v === '') return undefined
  if (!/^[+-]?\d+$/.test(v)) throw badRequest(`invalid value for ${name}: strconv.ParseInt: parsing "${v}": invalid syntax`)
  const n = Number(v)
  if (!Number.isSafeInteger(n)) throw badRequest(`invalid value for ${name}: strconv.ParseInt: parsing "${v}": value out of range`)
  return n
}

function parseTime (q: URLSearchParams, name: string): string | undefined {
  const v = q.get(name)
  if (v === null || v === '') return undefined
  const ms = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/.test(v) ? Date.parse(v) : NaN
  if (Number.isNaN(ms)) throw badRequest(`invalid value for ${name}: parsing time "${v}" as "2006-01-02T15:04:05Z07:00": cannot parse`)
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace(/\.\d+Z$/, 'Z')
}

/**
 * Parses and validates the query. Unparsable values are 400 naming the parameter; values out of range
 * and both since* set are 422 on kind PodLogOptions, as ValidatePodLogOptions answers.
 */
export function parsePodLogOptions (q: URLSearchParams, podName: string): PodLogOptions {
  const container = q.get('container') ?? undefined
  const opts: PodLogOptions = {
    container: container === '' ? undefined : container,
    follow: parseBoolean('follow', q.get('follow')) ?? false,
    previous: parseBoolean('previous', q.get('previous')) ?? false,
    timestamps: parseBoolean('timestamps', q.get('timestamps')) ?? false,
    insecureSkipTLSVerifyBackend: parseBoolean('insecureSkipTLSVerifyBackend', q.get('insecureSkipTLSVerifyBackend')) ?? false,
    tailLines: parseInt64(q, 'tailLines'),
    limitBytes: parseInt64(q, 'limitBytes'),
    sinceSeconds: parseInt64(q, 'sinceSeconds'),
    sinceTime: parseTime(q, 'sinceTime')
  }
  const causes: StatusCause[] = []
  if (opts.tailLines !== undefined && opts.tailLines < 0) causes.push({ reason: 'FieldValueInvalid', field: 'tailLines', message: `Invalid value: ${opts.tailLines}: must be greater than or equal to 0` })
  if (opts.limitBytes !== undefined && opts.limitBytes < 1) causes.push({ reason: 'FieldValueInvalid', field: 'limitBytes', message: `Invalid value: ${opts.limitBytes}: must be greater than 0` })
  if (opts.sinceSeconds !== undefined && opts.sinceTime !== undefined) causes.push({ reason: 'FieldValueForbidden', field: '', message: 'Forbidden: at most one of `sinceTime` or `sinceSeconds` may be specified' })
  if (opts.sinceSeconds !== undefined && opts.sinceSeconds < 1) causes.push({ reason: 'FieldValueInvalid', field: 'sinceSeconds', message: `Invalid value: ${opts.sinceSeconds}: must be greater than 0` })
  if (causes.length > 0) throw invalid('', 'PodLogOptions', podName, causes)
  return opts
}

interface PodShape {
  metadata?: { name?: string }
  spec?: { nodeName?: string; containers?: Array<{ name: string }>; initContainers?: Array<{ name: string }>; ephemeralContainers?: Array<{ name: string }> }
}

/** The container to read: the requested one if the pod has it, else the only one; Kubernetes' messages otherwise. */
export function chooseContainer (pod: PodShape, requested: string | undefined): string {
  const name = pod.metadata?.name ?? ''
  const spec = pod.spec ?? {}
  const all = [...(spec.initContainers ?? []), ...(spec.containers ?? []), ...(spec.ephemeralContainers ?? [])].map(c => c.name)
  if (requested !== undefined) {
    if (!all.includes(requested)) throw badRequest(`container ${requested} is not valid for pod ${name}`)
    return requested
  }
  const containers = spec.containers ?? []
  if (containers.length === 1) return containers[0]!.name
  if (containers.length === 0) throw badRequest(`a container name must be specified for pod ${name}`)
  throw badRequest(`a container name must be specified for pod ${name}, choose one of: [${all.join(' ')}]`)
}

interface NodeShape {
  metadata?: { name?: string }
  status?: { addresses?: Array<{ type: string; address: string }>; daemonEndpoints?: { kubeletEndpoint?: { Port?: number } } }
}

/** host:port of the node's orchlet: InternalIP first, then Hostname, and the published kubelet port. */
export function nodeEndpoint (node: NodeShape): { host: string; port: number } {
  const name = node.metadata?.name ?? ''
  const addrs = node.status?.addresses ?? []
  const host = addrs.find(a => a.type === 'InternalIP')?.address ?? addrs.find(a => a.type === 'Hostname')?.address
  if (host === undefined || host === '') throw new StatusError(500, 'InternalError', `node ${name} has no InternalIP or Hostname address`)
  const port = node.status?.daemonEndpoints?.kubeletEndpoint?.Port
  if (typeof port !== 'number' || !Number.isInteger(port) || port <= 0 || port > 65535) throw new StatusError(500, 'InternalError', `node ${name} publishes no orchlet port (status.daemonEndpoints.kubeletEndpoint.Port)`)
  return { host, port }
}

/**
 * The orchlet URL for a log request; every option the orchlet understands is passed on. The orchlet
 * filters by sinceSeconds only, so sinceTime goes as the whole seconds since then (`nowMs` is the
 * API server's clock; a time in the future gives a negative value, which selects nothing).
 */
export function containerLogsUrl (ep: { host: string; port: number }, namespace: string, pod: string, container: string, o: PodLogOptions, nowMs = Date.now()): string {
  const q = new URLSearchParams()
  if (o.follow) q.set('follow', 'true')
  if (o.previous) q.set('previous', 'true')
  if (o.timestamps) q.set('timestamps', 'true')
  if (o.tailLines !== undefined) q.set('tailLines', String(o.tailLines))
  if (o.limitBytes !== undefined) q.set('limitBytes', String(o.limitBytes))
  if (o.sinceSeconds !== undefined) q.set('sinceSeconds', String(o.sinceSeconds))
  if (o.sinceTime !== undefined) q.set('sinceSeconds', String(Math.ceil((nowMs - Date.parse(o.sinceTime)) / 1000)))
  const host = ep.host.includes(':') ? `[${ep.host}]` : ep.host
  const qs = q.toString()
  return `https://${host}:${ep.port}/containerLogs/${encodeURIComponent(namespace)}/${encodeURIComponent(pod)}/${encodeURIComponent(container)}${qs === '' ? '' : '?' + qs}`
}

export interface PodLogProxyOptions {
  /** Makes the dispatcher towards orchlets (the `cluster` egress selection); direct by default. */
  dispatcher?: (tls: TargetTls) => Dispatcher
  /** How long to wait for the TCP+TLS connection to the orchlet (default 5 s). */
  connectTimeoutMs?: number
  /** How long to wait for the orchlet's response headers (default 30 s). */
  headersTimeoutMs?: number
  now?: () => number
  /** The API server's client certificate towards orchlets (PEM), and the CA their serving certificates must chain to. */
  tls?: OrchletTls
}

export interface OrchletTls { certPem?: string; keyPem?: string; caPem?: string }

export interface PodLogRequest {
  registry: Registry
  ctx: RequestContext
  version: string
  namespace: string
  name: string
  query: URLSearchParams
  req: IncomingMessage
  res: ServerResponse
}

export interface PodLogProxy {
  /** Serves one log request; throws StatusError before the response starts, streams afterwards. */
  serve(r: PodLogRequest): Promise<void>
  close(): Promise<void>
}

function parsed (result: { bytes: Buffer } | Buffer): Record<string, unknown> {
  const bytes = Buffer.isBuffer(result) ? result : result.bytes
  return JSON.parse(bytes.toString('utf8')) as Record<string, unknown>
}

/** An orchlet error answer as a Status error: its 4xx codes pass through, anything else is 500. */
async function upstreamError (statusCode: number, body: string): Promise<StatusError> {
  let message = body.trim()
  try { message = String((JSON.parse(body) as { message?: unknown }).message ?? message) } catch { /* plain text */ }
  if (message === '') message = `the orchlet answered ${statusCode}`
  if (statusCode === 404) return new StatusError(404, 'NotFound', message)
  if (statusCode === 400) return badRequest(message)
  if (statusCode === 401 || statusCode === 403) return new StatusError(500, 'InternalError', `the orchlet refused the request (${statusCode}): ${message}`)
  return new StatusError(500, 'InternalError', message)
}

function unreachable (url: string, err: unknown): StatusError {
  const e = err as { code?: string; message?: string; cause?: { code?: string; message?: string } }
  const why = e instanceof undiciErrors.ConnectTimeoutError ? 'connect timeout' : (e.cause?.message ?? e.message ?? String(err))
  return new StatusError(500, 'InternalError', `Get "${url}": ${why}`)
}

export function createPodLogProxy (o: PodLogProxyOptions = {}): PodLogProxy {
  const connectTimeoutMs = o.connectTimeoutMs ?? 5000
  const headersTimeoutMs = o.headersTimeoutMs ?? 30_000
  const tls = o.tls ?? {}
  const target = { ca: tls.caPem, cert: tls.certPem, key: tls.keyPem, rejectUnauthorized: tls.caPem !== undefined, timeout: connectTimeoutMs }
  const dispatcher = o.dispatcher?.(target) ?? new Agent({ connect: target, connectTimeout: connectTimeoutMs })

  async function serve (r: PodLogRequest): Promise<void> {
    const pods = r.registry.handler('', r.version, 'pods')
    const nodes = r.registry.handler('', r.version, 'nodes')
    if (pods === undefined || nodes === undefined) throw new StatusError(404, 'NotFound', 'the server could not find the requested resource')
    const opts = parsePodLogOptions(r.query, r.name)
    const pod = parsed(await pods.get(r.ctx, r.namespace, r.name, {})) as PodShape
    const container = chooseContainer(pod, opts.container)
    const nodeName = pod.spec?.nodeName ?? ''
    if (nodeName === '') {
      // As kube-apiserver: a pod not yet on a node has no log location, so the answer is an empty log.
      r.res.writeHead(200, { 'Content-Type': 'text/plain', 'Content-Length': '0' })
      r.res.end()
      return
    }
    const ep = nodeEndpoint(parsed(await nodes.get(r.ctx, '', nodeName, {})) as NodeShape)
    const url = containerLogsUrl(ep, r.namespace, r.name, container, opts, (o.now ?? Date.now)())

    const abort = new AbortController()
    const onClose = (): void => { if (!r.res.writableFinished) abort.abort() }
    r.res.on('close', onClose)
    let upstream: Awaited<ReturnType<typeof request>>
    try {
      upstream = await request(url, { dispatcher, signal: abort.signal, headersTimeout: headersTimeoutMs, bodyTimeout: opts.follow ? 0 : headersTimeoutMs })
    } catch (err) {
      r.res.off('close', onClose)
      if (abort.signal.aborted) return
      throw unreachable(url, err)
    }
    if (upstream.statusCode !== 200) {
      const text = await upstream.body.text().catch(() => '')
      r.res.off('close', onClose)
      throw await upstreamError(upstream.statusCode, text)
    }
    r.res.writeHead(200, { 'Content-Type': 'text/plain', 'Cache-Control': 'no-cache, private', 'X-Content-Type-Options': 'nosniff' })
    if (r.req.method === 'HEAD') { abort.abort(); r.res.end(); return }
    await streamBody(upstream.body, r.res, onClose)
  }

  return {
    serve,
    close: async () => { await dispatcher.close() }
  }
}
