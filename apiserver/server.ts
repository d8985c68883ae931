// The API server's HTTP front: routing to resources, discovery, OpenAPI, health and /version; errors as Status; shutdown.
// Plain HTTP/1.1 for now: TLS and real authentication come in a later issue (see endpoints/request-context.ts).

import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Logger } from 'pino'
import { internalError, isStatusError, pathNotFound, StatusError } from './errors/status-error.js'
import type { Registry } from './registry/types.js'
import type { ResourceDefinition } from './schema/types.js'
import { createDiscovery } from './endpoints/discovery.js'
import { encodeValue, send, sendError } from './endpoints/encode.js'
import { serveResource, type ResourceEnv } from './endpoints/handlers.js'
import { createHealthEndpoints, type HealthCheck } from './endpoints/health.js'
import { acceptsJson } from './endpoints/negotiate.js'
import { createOpenAPIEndpoint, type OpenAPIBuilders } from './endpoints/openapi.js'
import { parseRequestInfo } from './endpoints/request-info.js'
import { createPodLogProxy } from './endpoints/pod-log.js'
import { createTableConvertor, type TableConvertor } from './endpoints/table.js'
import type { WatchStream } from './endpoints/watch.js'
import { versionInfo } from './endpoints/version.js'

export interface ApiServerOptions {
  registry: Registry
  logger: Logger
  clock?: { now(): number }
  random?: () => number
  /** OpenAPI document builders (apiserver/schema/openapi.ts); without them /openapi/* is 404. */
  openapi?: OpenAPIBuilders
  /** Extra checks for /healthz, /livez and /readyz besides ping and log (e.g. etcd, poststarthook/...). */
  healthChecks?: HealthCheck[]
  /** Non-watch requests answer 504 after this long (Kubernetes' default is 60 s). */
  requestTimeoutMs?: number
  maxWatchPendingBytes?: number
  /** Connect timeout towards orchlets for pods/log (default 5 s). */
  kubeletConnectTimeoutMs?: number
}

export interface ApiServer {
  /** Serves one request; usable with any node:http server or without a listening socket. */
  handle(req: IncomingMessage, res: ServerResponse): void
  listen(opts: { port: number; host?: string }): Promise<{ address: string; port: number }>
  /** Makes /readyz fail (shutdown check) before the server stops accepting. */
  beginShutdown(): void
  /** Stops accepting, ends every watch, waits briefly for in-flight requests, then closes connections. */
  close(): Promise<void>
}

export function createApiServer (opts: ApiServerOptions): ApiServer {
  const { registry, logger } = opts
  const now = (): number => (opts.clock ?? { now: () => Date.now() }).now()
  const random = opts.random ?? Math.random
  const requestTimeoutMs = opts.requestTimeoutMs ?? 60_000
  const discovery = createDiscovery(registry)
  const openapi = opts.openapi === undefined ? undefined : createOpenAPIEndpoint(registry, opts.openapi)
  const convertors = new Map<ResourceDefinition, TableConvertor>()
  const watches = new Set<WatchStream>()
  let shuttingDown = false
  let server: Server | undefined
  const podLogs = createPodLogProxy({ connectTimeoutMs: opts.kubeletConnectTimeoutMs, now })

  const unsubscribe = registry.onDefinitionsChanged(() => {
    discovery.invalidate()
    openapi?.invalidate()
    convertors.clear()
  })

  const health = createHealthEndpoints({
    checks: [
      { name: 'ping', check: () => {} },
      { name: 'log', check: () => {} },
      ...(opts.healthChecks ?? [])
    ],
    readyChecks: [{ name: 'shutdown', check: () => { if (shuttingDown) throw new Error('server is shutting down') } }],
    onFailure: (endpoint, check, err) => logger.warn({ endpoint, check, err }, 'health check failed')
  })

  const env: ResourceEnv = {
    registry,
    now,
    random,
    logger,
    convertor (def) {
      let c = convertors.get(def)
      if (c === undefined) { c = createTableConvertor(def, now); convertors.set(def, c) }
      return c
    },
    trackWatch (stream) {
      watches.add(stream)
      return () => watches.delete(stream)
    },
    maxWatchPendingBytes: opts.maxWatchPendingBytes,
    podLogs
  }

  function serveJsonDocument (req: IncomingMessage, res: ServerResponse, doc: unknown): void {
    if (!acceptsJson(req.headers.accept)) throw new StatusError(406, 'NotAcceptable', 'only application/json is served here')
    const pretty = new URL(req.url ?? '/', 'http://x').searchParams.get('pretty') === 'true'
    send(req, res, 200, encodeValue(doc, 'json', pretty))
  }

  async function route (req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    const p = url.pathname
    if (await health.serve(req, res, url)) return
    if (p === '/version' || p === '/version/') return serveJsonDocument(req, res, versionInfo())
    if (p.startsWith('/openapi/')) {
      if (openapi !== undefined && openapi.serve(req, res, url)) return
      throw pathNotFound()
    }
    if (p === '/' && (req.method === 'GET' || req.method === 'HEAD')) {
      return serveJsonDocument(req, res, { paths: ['/api', '/api/v1', '/apis', '/healthz', '/livez', '/openapi/v2', '/openapi/v3', '/readyz', '/version'] })
    }
    const parsed = parseRequestInfo(req.method ?? 'GET', url)
    if (parsed instanceof StatusError) throw parsed
    if (parsed.kind === 'discovery') {
      if (req.method !== 'GET' && req.method !== 'HEAD') throw new StatusError(405, 'MethodNotAllowed', `${req.method ?? ''} is not supported on discovery documents`)
      const host = req.headers.host ?? `${req.socket.localAddress ?? '127.0.0.1'}:${req.socket.localPort ?? 0}`
      return serveJsonDocument(req, res, discovery.document(parsed.path, host))
    }
    await serveResource(env, req, res, url, parsed.info)
  }

  function fail (req: IncomingMessage, res: ServerResponse, err: unknown): void {
    if (res.writableEnded) return
    if (res.headersSent) {
      if (!isStatusError(err)) logger.error({ err, url: req.url }, 'request failed after the response started')
      res.destroy()
      return
    }
    const status = isStatusError(err) ? err : internalError(err)
    if (!isStatusError(err)) logger.error({ err, method: req.method, url: req.url }, 'unhandled error while serving a request')
    // Unread bodies (413) or broken uploads: answer, then drop the connection instead of draining it.
    const extra: Record<string, string> = status.code === 413 || !req.complete ? { Connection: 'close' } : {}
    sendError(req, res, status, extra)
  }

  function handle (req: IncomingMessage, res: ServerResponse): void {
    const started = now()
    let url: URL
    try {
      url = new URL(req.url ?? '/', 'http://localhost')
    } catch {
      fail(req, res, new StatusError(400, 'BadRequest', 'malformed request URL'))
      return
    }
    const isWatch = /^(1|true)$/i.test(url.searchParams.get('watch') ?? '')
    // Long-running requests (watches, pods/log) are not cut by the request timeout, as in Kubernetes.
    const longRunning = isWatch || /^\/api\/v1\/namespaces\/[^/]+\/pods\/[^/]+\/log\/?$/.test(url.pathname)
    const timer = longRunning
      ? undefined
      : setTimeout(() => fail(req, res, new StatusError(504, 'Timeout', 'request did not complete within the allotted timeout', { retryAfterSeconds: 1 })), requestTimeoutMs)
    res.on('finish', () => logger.debug({ method: req.method, url: req.url, status: res.statusCode, ms: now() - started }, 'request'))
    route(req, res, url)
      .catch(err => fail(req, res, err))
      .finally(() => { if (timer !== undefined) clearTimeout(timer) })
  }

  return {
    handle,
    async listen ({ port, host = '127.0.0.1' }) {
      const s = createServer({ keepAliveTimeout: 65_000 }, handle)
      server = s
      await new Promise<void>((resolve, reject) => {
        s.once('error', reject)
        s.listen(port, host, () => { s.off('error', reject); resolve() })
      })
      const addr = s.address() as AddressInfo
      return { address: addr.address, port: addr.port }
    },
    beginShutdown () { shuttingDown = true },
    async close () {
      shuttingDown = true
      unsubscribe()
      for (const w of [...watches]) w.close()
      const s = server
      if (s === undefined) { await podLogs.close(); return }
      const closed = new Promise<void>(resolve => s.close(() => resolve()))
      s.closeIdleConnections()
      const grace = setTimeout(() => s.closeAllConnections(), 5000)
      await closed
      clearTimeout(grace)
      await podLogs.close()
    }
  }
}
