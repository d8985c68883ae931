// The request-metrics step: a named wrapper recording apiserver_request_total, _duration_seconds and long-running
// requests with kube-apiserver's labels; and the /metrics endpoint itself.

import type { IncomingMessage, ServerResponse } from 'node:http'
import { StatusError } from '../errors/status-error.js'
import type { ApiServerMetrics } from '../metrics/apiserver-metrics.js'
import { rawPath, requestInfoOf, type RequestInfo } from './request-info.js'
import type { RequestHandler } from './request-limits.js'
import type { Registry } from '../registry/types.js'

const APPLY_PATCH = 'application/apply-patch+yaml'

/** The reported verb, as kube-apiserver's CleanVerb: HTTP-ish names, LIST/WATCH for collections, APPLY for server-side apply. */
function reportedVerb (req: IncomingMessage, info: RequestInfo | undefined): string {
  const method = (req.method ?? 'GET').toUpperCase()
  if (info === undefined) return method === 'HEAD' ? 'GET' : method
  if (info.subresource === 'proxy' || info.subresource === 'exec' || info.subresource === 'attach' || info.subresource === 'portforward') return 'CONNECT'
  switch (info.verb) {
    case 'list': return 'LIST'
    case 'watch': return 'WATCH'
    case 'create': return 'POST'
    case 'update': return 'PUT'
    case 'delete': return 'DELETE'
    case 'deletecollection': return 'DELETECOLLECTION'
    case 'patch': return (req.headers['content-type'] ?? '').split(';')[0]?.trim() === APPLY_PATCH ? 'APPLY' : 'PATCH'
    default: return 'GET'
  }
}

/** cleanDryRun: '' for a real request, `All`, or `invalid` (any other value would make a new series). */
function dryRunLabel (url: URL): string {
  if (url.search === '') return '' // most requests have no query: no URLSearchParams to build
  const values = [...new Set(url.searchParams.getAll('dryRun').filter(v => v !== ''))]
  if (values.length === 0) return ''
  return values.every(v => v === 'All') ? 'All' : 'invalid'
}

/** Whether the server serves `resource` (and `subresource`) in group/version: only those name a series. */
export type KnownResource = (group: string, version: string, resource: string, subresource: string) => boolean

/** Connect-style subresources the HTTP layer serves itself (pods/log; proxies, exec and attach where served). */
const CONNECT_SUBRESOURCES = new Set(['log', 'proxy', 'exec', 'attach', 'portforward'])

/** The registry's resources and their subresources (status, scale, approval, POST-only ones, connect-style ones). */
export function servedBy (registry: Registry): KnownResource {
  return (group, version, resource, subresource) => {
    const def = registry.handler(group, version, resource)?.definition
    if (def === undefined) return false
    if (subresource === '' || CONNECT_SUBRESOURCES.has(subresource)) return true
    if ((subresource === 'status' && def.subresources.status === true) || (subresource === 'approval' && def.subresources.approval === true)) return true
    if (subresource === 'scale' && def.subresources.scale !== undefined) return true
    return registry.subresourceNames(group, version, resource).includes(subresource)
  }
}

function scopeOf (info: RequestInfo | undefined): string {
  if (info === undefined) return ''
  if (info.name !== '') return 'resource'
  return info.namespace !== '' ? 'namespace' : 'cluster'
}

export interface RequestLabels {
  verb: string, dry_run: string, group: string, version: string, resource: string, subresource: string, scope: string, component: string
}

/** The labels a request is recorded under; non-resource requests carry only the verb and component. */
export function requestLabels (req: IncomingMessage, url: URL, known: KnownResource): RequestLabels {
  const parsed = requestInfoOf(req.method ?? 'GET', url, rawPath(req.url ?? '/'))
  const resource = parsed instanceof StatusError || parsed.kind !== 'resource' ? undefined : parsed.info
  // A path naming no served resource (a 404) is recorded without resource labels, so probes cannot grow the series.
  const info = resource !== undefined && known(resource.group, resource.version, resource.resource, resource.subresource) ? resource : undefined
  return {
    verb: reportedVerb(req, info),
    dry_run: dryRunLabel(url),
    group: info?.group ?? '',
    version: info?.version ?? '',
    resource: info?.resource ?? '',
    subresource: info?.subresource ?? '',
    scope: scopeOf(info),
    component: 'apiserver'
  }
}

function withoutDryRun (labels: RequestLabels): Omit<RequestLabels, 'dry_run'> {
  const { dry_run: _dryRun, ...rest } = labels
  return rest
}

/**
 * Outermost step: every answered request counts under its HTTP code (401, 403 and 429 too), its latency is observed
 * when the response ends or the connection closes; long-running ones are in the gauge meanwhile.
 */
export function withRequestMetrics (metrics: ApiServerMetrics, known: KnownResource, next: RequestHandler): RequestHandler {
  return async (req, res, target) => {
    const start = process.hrtime.bigint()
    const labels = requestLabels(req, target.url, known)
    // Only long-running requests are in the gauge, whose labels have no dry_run: the copy is made for them alone.
    const longLabels = target.longRunning ? withoutDryRun(labels) : undefined
    if (longLabels !== undefined) metrics.longRunning.inc(longLabels)
    let recorded = false
    const record = (): void => {
      if (recorded) return
      recorded = true
      if (longLabels !== undefined) metrics.longRunning.dec(longLabels)
      metrics.requests.inc({ ...labels, code: String(res.statusCode) })
      metrics.requestDuration.observe(labels, Number(process.hrtime.bigint() - start) / 1e9)
    }
    res.once('finish', record)
    res.once('close', record)
    await next(req, res, target)
  }
}

/** GET /metrics: the Prometheus text exposition of the API server's registry (authorized as the path `/metrics`). */
export async function serveMetrics (metrics: ApiServerMetrics, req: IncomingMessage, res: ServerResponse): Promise<void> {
  if (req.method !== 'GET' && req.method !== 'HEAD') throw new StatusError(405, 'MethodNotAllowed', `${req.method ?? ''} is not supported on /metrics`)
  const body = await metrics.text()
  res.writeHead(200, { 'Content-Type': metrics.base.contentType, 'Content-Length': Buffer.byteLength(body) })
  res.end(req.method === 'HEAD' ? undefined : body)
}
