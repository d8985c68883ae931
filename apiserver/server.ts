// The API server's HTTP front: routing to resources, discovery, OpenAPI, health and /version; errors as Status; shutdown.
// HTTPS when given a serving pair (orch up / orch apiserver always are); plain HTTP only for in-process tests.

import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import { createServer as createHttpsServer } from 'node:https'
import type { SecureVersion } from 'node:tls'
import type { AddressInfo } from 'node:net'
import type { Duplex } from 'node:stream'
import type { Logger } from 'pino'
import { internalError, isStatusError, pathNotFound, StatusError } from './errors/status-error.js'
import type { Registry } from './registry/types.js'
import type { ResourceDefinition } from './schema/types.js'
import { createDiscovery } from './endpoints/discovery.js'
import { AGGREGATED_DISCOVERY_TYPE, wantsAggregatedDiscovery } from './endpoints/discovery-aggregated.js'
import { Messages } from './endpoints/protobuf/messages.js'
import { answerClientError, discardBody } from './endpoints/connection-errors.js'
import { encodeValue, send, sendError, warningHeaders } from './endpoints/encode.js'
import { requestNotes } from './endpoints/request-context.js'
import { serveResource, type ResourceEnv } from './endpoints/handlers.js'
import type { DeprecatedApiRecorder } from './endpoints/deprecated-apis.js'
import { createHealthEndpoints, type HealthCheck } from './endpoints/health.js'
import { acceptsJson } from './endpoints/negotiate.js'
import { createOpenAPIEndpoint, type OpenAPIBuilders } from './endpoints/openapi.js'
import { hasDotSegment, parseRequestInfo, rawPath, requestInfoOf } from './endpoints/request-info.js'
import { DEFAULT_INFLIGHT, withInflightLimit, withTimeout, type InflightLimits, type RequestHandler, type RequestTarget } from './endpoints/request-limits.js'
import { withAuthentication } from './endpoints/authentication.js'
import { withAuthorization } from './endpoints/authorization.js'
import { withImpersonation } from './endpoints/impersonation.js'
import { withAudit, withAuditInit } from './endpoints/audit.js'
import { withTracing, type RequestTracing } from './endpoints/tracing.js'
import { directEgress, type Egress } from './egress/egress.js'
import { withoutResponseCompression } from './endpoints/compression.js'
import type { FeatureGates } from './featuregate/featuregate.js'
import type { Auditor } from './audit/auditor.js'
import type { Authenticator } from './auth/authenticator.js'
import { alwaysAllow } from './auth/authorizer.js'
import type { Authorizer, UserInfo } from './auth/types.js'
import { createPodLogProxy, type OrchletTls } from './endpoints/pod-log.js'
import { createResourceProxy } from './endpoints/proxy.js'
import { createPodStreamProxy, type UpgradeConnection } from './endpoints/pod-stream.js'
import { takeOverUpgrade } from './endpoints/upgrade.js'
import { createTableConvertor, type TableConvertor } from './endpoints/table.js'
import type { WatchStream } from './endpoints/watch.js'
import { versionInfo } from './endpoints/version.js'
import { serveMetrics, servedBy, withRequestMetrics } from './endpoints/request-metrics.js'
import { ApiServerMetrics } from './metrics/apiserver-metrics.js'

export interface ApiServerOptions {
  registry: Registry
  /** Counts requests to deprecated APIs (endpoints/deprecated-apis-metric.ts registers the gauge). */
  deprecatedApis?: DeprecatedApiRecorder
  logger: Logger
  clock?: { now(): number }
  random?: () => number
  /** OpenAPI document builders (apiserver/schema/openapi.ts); without them /openapi/* is 404. */
  openapi?: OpenAPIBuilders
  /** Extra checks for /healthz, /livez and /readyz besides ping and log (e.g. etcd, poststarthook/...). */
  healthChecks?: HealthCheck[]
  /** Extra checks for /readyz alone (e.g. storage-space, informational unless asked to fail readiness). */
  readyChecks?: HealthCheck[]
  /** Non-watch requests answer 504 after this long (Kubernetes' default is 60 s; 0 = none). */
  requestTimeoutMs?: number
  /** --min-request-timeout: watches without timeoutSeconds last between this and twice this (default 30 min). */
  minRequestTimeoutMs?: number
  /** --livez-grace-period: how long after creation /livez takes unfinished post-start hooks as done (default 0). */
  livezGracePeriodMs?: number
  /** In-flight caps (`--max-requests-inflight` 400, `--max-mutating-requests-inflight` 200). */
  inflight?: InflightLimits
  /** Open connections accepted at once (further ones are closed at once); default 4096. */
  maxConnections?: number
  /** Time for a client to send its request headers (default 10 s); the whole request gets the request timeout. */
  headersTimeoutMs?: number
  maxWatchPendingBytes?: number
  /** Connect timeout towards orchlets for pods/log (default 5 s). */
  kubeletConnectTimeoutMs?: number
  /** TLS towards orchlets (pods/log): the client pair the API server presents and the CA their serving certificates chain to. */
  orchletTls?: OrchletTls
  /** Who is asking (client certificates, tokens, anonymous); without it every request is an administrator (tests only). */
  authentication?: Authenticator
  /** What they may do (default: everything). */
  authorization?: Authorizer
  /** Audit events of every request (--audit-policy-file, --audit-log-path); none without. */
  audit?: Auditor
  /** --feature-gates: APIResponseCompression (gzip of large responses) and StorageVersionHash (discovery) act here. */
  featureGates?: FeatureGates
  /** Where outbound connections go (--egress-selector-config-file); every class direct without. */
  egress?: Egress
  /** A span per request with the lifecycle steps as children (--tracing-config-file); none without. */
  tracing?: RequestTracing
  /** Serve HTTPS with this pair; client certificates signed by `clientCa` are asked for (not required). */
  tls?: ServerTls
  /** The API server's metrics registry (/metrics); default: one without process metrics (in-process tests). */
  metrics?: ApiServerMetrics
}

export interface ServerTls { cert: string; key: string; clientCa: string; minVersion?: SecureVersion; ciphers?: string }

export interface ApiServer {
  /** Serves one request; usable with any node:http server or without a listening socket. */
  handle(req: IncomingMessage, res: ServerResponse): void
  listen(opts: { port: number; host?: string }): Promise<{ address: string; port: number }>
  /** Makes /readyz fail (shutdown check) before the server stops accepting. */
  beginShutdown(): void
  /** Stops accepting, ends every watch, waits briefly for in-flight requests, then closes connections. */
  close(): Promise<void>
}

/** The user of every request to a server made without an authenticator (in-process tests). */
const INSECURE_ADMIN: UserInfo = { username: 'system:admin', groups: ['system:masters', 'system:authenticated'] }

export function createApiServer (opts: ApiServerOptions): ApiServer {
  const { registry, logger } = opts
  const now = (): number => (opts.clock ?? { now: () => Date.now() }).now()
  const random = opts.random ?? Math.random
  const requestTimeoutMs = opts.requestTimeoutMs ?? 60_000
  const gates = opts.featureGates
  const discovery = createDiscovery(registry, { storageVersionHash: gates?.enabled('StorageVersionHash') })
  const openapi = opts.openapi === undefined ? undefined : createOpenAPIEndpoint(registry, opts.openapi)
  const convertors = new Map<ResourceDefinition, TableConvertor>()
  const watches = new Set<WatchStream>()
  let shuttingDown = false
  const createdAt = now()
  let server: Server | undefined
  const metrics = opts.metrics ?? ApiServerMetrics.create({ version: '1.29', processMetrics: false })
  const podLogs = createPodLogProxy({
    connectTimeoutMs: opts.kubeletConnectTimeoutMs, now, tls: opts.orchletTls, dispatcher: tls => (opts.egress ?? directEgress()).dispatcher('cluster', tls)
  })
  const proxy = createResourceProxy({ connectTimeoutMs: opts.kubeletConnectTimeoutMs, tls: opts.orchletTls, random, dispatcher: tls => (opts.egress ?? directEgress()).dispatcher('cluster', tls) })
  const podStreams = createPodStreamProxy({
    connectTimeoutMs: opts.kubeletConnectTimeoutMs,
    tls: opts.orchletTls,
    egress: opts.egress,
    translateWebsockets: gates?.enabled('TranslateStreamCloseWebsocketRequests') ?? true,
    portForwardWebsockets: gates?.enabled('PortForwardWebsockets') ?? true
  })
  const upgrades = new WeakMap<IncomingMessage, UpgradeConnection>()

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
    readyChecks: [
      ...(opts.readyChecks ?? []),
      { name: 'shutdown', check: () => { if (shuttingDown) throw new Error('server is shutting down') } }
    ],
    onFailure: (endpoint, check, err) => logger.warn({ endpoint, check, err }, 'health check failed'),
    inLivezGrace: () => now() - createdAt < (opts.livezGracePeriodMs ?? 0)
  })

  const env: ResourceEnv = {
    registry,
    now,
    random,
    logger,
    minRequestTimeoutMs: opts.minRequestTimeoutMs,
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
    watchOpened: w => metrics.watchOpened(w),
    podLogs,
    deprecatedApis: opts.deprecatedApis,
    proxy,
    podStreams,
    upgradeOf: req => upgrades.get(req),
    protobuf: new Messages()
  }

  function serveJsonDocument (req: IncomingMessage, res: ServerResponse, doc: unknown): void {
    if (!acceptsJson(req.headers.accept)) throw new StatusError(406, 'NotAcceptable', 'only application/json is served here')
    const pretty = new URL(req.url ?? '/', 'http://x').searchParams.get('pretty') === 'true'
    send(req, res, 200, encodeValue(doc, 'json', pretty))
  }

  async function route (req: IncomingMessage, res: ServerResponse, target: RequestTarget): Promise<void> {
    const url = target.url
    // Routed by the path as sent: a `.`/`..` segment (even encoded) is never resolved into another path.
    const p = rawPath(req.url ?? '/')
    if (hasDotSegment(p)) {
      const parsed = parseRequestInfo(req.method ?? 'GET', url, p)
      throw parsed instanceof StatusError ? parsed : pathNotFound()
    }
    if (await health.serve(req, res, url)) return
    if (p === '/version' || p === '/version/') return serveJsonDocument(req, res, versionInfo())
    if (p === '/metrics') return await serveMetrics(metrics, req, res)
    if (p.startsWith('/openapi/')) {
      if (openapi !== undefined && openapi.serve(req, res, url)) return
      throw pathNotFound()
    }
    if (p === '/' && (req.method === 'GET' || req.method === 'HEAD')) {
      return serveJsonDocument(req, res, { paths: ['/api', '/api/v1', '/apis', '/healthz', '/livez', '/metrics', '/openapi/v2', '/openapi/v3', '/readyz', '/version'] })
    }
    const parsed = requestInfoOf(req.method ?? 'GET', url, p)
    if (parsed instanceof StatusError) throw parsed
    if (parsed.kind === 'discovery') {
      if (req.method !== 'GET' && req.method !== 'HEAD') throw new StatusError(405, 'MethodNotAllowed', `${req.method ?? ''} is not supported on discovery documents`)
      const host = req.headers.host ?? `${req.socket.localAddress ?? '127.0.0.1'}:${req.socket.localPort ?? 0}`
      const top = parsed.path.group === undefined && parsed.path.version === undefined
      if (top && gates?.enabled('AggregatedDiscoveryEndpoint') !== false && wantsAggregatedDiscovery(req.headers.accept)) {
        const pretty = url.searchParams.get('pretty') === 'true'
        const body = encodeValue(discovery.aggregated(parsed.path.apiPrefix), 'json', pretty)
        return send(req, res, 200, { ...body, contentType: AGGREGATED_DISCOVERY_TYPE }, { Vary: 'Accept' })
      }
      return serveJsonDocument(req, res, discovery.document(parsed.path, host))
    }
    await serveResource(env, req, res, url, parsed.info, target.user ?? INSECURE_ADMIN)
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
    if (status.code === 413) {
      // The client is still sending: answer, then read and drop the rest of the body (up to a cap) so the client
      // reads the answer instead of meeting a reset connection; past the cap the connection is dropped.
      discardBody(req)
      sendError(req, res, status)
      return
    }
    // Warnings admission gave before refusing go out with the refusal, as kube-apiserver sends them. Broken uploads:
    // answer, then drop the connection.
    sendError(req, res, status, { ...warningHeaders(requestNotes(req).warnings), ...(req.complete ? {} : { Connection: 'close' }) })
  }

  // The request pipeline, each step a named wrapper, in kube-apiserver's order: tracing, request metrics, the audit ID,
  // authentication, audit, impersonation, in-flight limits, the timeout, authorization, then routing. Without an
  // authenticator (in-process tests only) everyone is an administrator.
  const authorizer = opts.authorization ?? alwaysAllow
  const routing: RequestHandler = async (req, res, target) => await route(req, res, target)
  const routed = gates?.enabled('APIResponseCompression') === false ? withoutResponseCompression(routing) : routing
  const limited = withInflightLimit(opts.inflight ?? DEFAULT_INFLIGHT, withTimeout(requestTimeoutMs, fail, withAuthorization(authorizer, routed)),
    (kind, n) => metrics.inflightChanged(kind, n))
  const impersonated = withImpersonation(authorizer, limited)
  const audited = opts.audit === undefined ? impersonated : withAudit(opts.audit, impersonated)
  const authenticated: RequestHandler = opts.authentication === undefined
    ? async (req, res, target) => { target.user = INSECURE_ADMIN; await audited(req, res, target) }
    : withAuthentication(opts.authentication, logger, audited)
  const measured = withRequestMetrics(metrics, servedBy(registry), opts.audit === undefined ? authenticated : withAuditInit(opts.audit, authenticated))
  const pipeline = opts.tracing === undefined ? measured : withTracing(opts.tracing, measured)

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
    // Long-running requests (watches, pods/log) are neither counted in flight nor cut by the timeout, as in Kubernetes.
    const longRunning = isWatch || /^\/api\/v1\/namespaces\/[^/]+\/pods\/[^/]+\/(log|exec|attach|portforward)\/?$/.test(rawPath(req.url ?? '/')) ||
      /^\/api\/v1\/(namespaces\/[^/]+\/)?(nodes|pods|services)\/[^/]+\/proxy(\/|$)/.test(rawPath(req.url ?? '/'))
    res.on('finish', () => logger.debug({ method: req.method, url: req.url, status: res.statusCode, ms: now() - started }, 'request'))
    pipeline(req, res, { url, longRunning }).catch(err => fail(req, res, err))
  }

  return {
    handle,
    async listen ({ port, host = '127.0.0.1' }) {
      const headersTimeout = opts.headersTimeoutMs ?? 10_000
      const httpOptions = {
        keepAliveTimeout: 65_000,
        headersTimeout,
        // A request still receiving its body is answered 504 by the request timeout; Node's own cut, a little later,
        // only catches what that leaves (long-running requests never send a body).
        requestTimeout: requestTimeoutMs > 0 ? Math.max(requestTimeoutMs + 5000, headersTimeout + 1) : 0,
        connectionsCheckingInterval: 1000
      }
      const tls = opts.tls
      // Client certificates are requested but not required: a request without one is authenticated otherwise.
      const s: Server = tls === undefined
        ? createServer(httpOptions, handle)
        : createHttpsServer({
          ...httpOptions, cert: tls.cert, key: tls.key, ca: tls.clientCa, requestCert: true, rejectUnauthorized: false,
          minVersion: tls.minVersion ?? 'TLSv1.2', ...(tls.ciphers === undefined ? {} : { ciphers: tls.ciphers })
        }, handle)
      s.maxConnections = opts.maxConnections ?? 4096
      s.on('clientError', answerClientError)
      // Upgrade requests (exec, attach, port-forward) run the same pipeline; the handler takes the socket over.
      s.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
        upgrades.set(req, { socket, head })
        handle(req, takeOverUpgrade(req, socket))
      })
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
      podStreams.close()
      const s = server
      if (s === undefined) { await podLogs.close(); await proxy.close(); return }
      const closed = new Promise<void>(resolve => s.close(() => resolve()))
      s.closeIdleConnections()
      const grace = setTimeout(() => s.closeAllConnections(), 5000)
      await closed
      clearTimeout(grace)
      await podLogs.close()
      await proxy.close()
    }
  }
}
