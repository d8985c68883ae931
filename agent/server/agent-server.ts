// The orchlet's own server: the TLS port (authenticated), the read-only port and the healthz port.

import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import { createServer as createHttpsServer } from 'node:https'
import type { AddressInfo } from 'node:net'
import type { Authenticator } from './authn.js'
import { attributesFor, type Authorizer } from './authz.js'
import type { ServingTls } from './tls.js'
import { writeContainerLog, type LogQuery } from './container-logs.js'
import { PROMETHEUS_CONTENT_TYPE } from './metrics.js'
import type { Duplex } from 'node:stream'
import { createLogAttach, isWebSocketUpgrade } from './log-attach.js'
import { isSpdyUpgrade } from './spdy-attach.js'
import { answerStatus, parseStreamingPath, pipeUpgrade, streamingRequest, streamingUrl, StreamingError, type RuntimeIdsLookup } from './streaming.js'

/** What the server shows of the agent; the pod manager implements it. */
export interface AgentView {
  /** The pods this node runs, with their latest status. */
  pods(): Array<Record<string, unknown>>
  /** The CRI log file of a container, or undefined when the pod/container is unknown. */
  containerLogPath(namespace: string, pod: string, container: string, previous: boolean): string | undefined
  /** Why a container that never started has no log (undefined when it has one, or is unknown). */
  containerWaiting(namespace: string, pod: string, container: string): string | undefined
  hasContainer(namespace: string, pod: string, container: string): boolean
  containerRunning(namespace: string, pod: string, container: string): boolean
  statsSummary(): Promise<Record<string, unknown>>
  /** The runtime and IDs of a pod's sandbox and container, for exec, attach and port-forward. */
  runtimeIds?: RuntimeIdsLookup
  /** Named health checks; all must pass for /healthz to answer 200. */
  healthChecks(): Array<{ name: string; ok: boolean; message?: string }>
}

export interface AgentServerOptions {
  view: AgentView
  nodeName: string
  address: string
  port: number
  readOnlyPort: number
  healthzBindAddress: string
  healthzPort: number
  enableServer: boolean
  enableDebuggingHandlers: boolean
  tls?: ServingTls
  clientCaPem?: Buffer
  authenticate: Authenticator
  authorize: Authorizer
  logger: { warn(o: object, m?: string): void; info(o: object, m?: string): void }
  /** /configz: the running configuration (`{"orchletconfig": {...}}`); absent: 404. */
  configz?: () => Record<string, unknown>
  /** /metrics, /metrics/resource, /metrics/probes, /metrics/cadvisor: Prometheus text by path; absent: 404. */
  metrics?: ReadonlyMap<string, () => Promise<string>>
}

export interface AgentServer {
  start(): Promise<void>
  /** Bound ports (useful with port 0). */
  ports(): { port?: number; readOnlyPort?: number; healthzPort?: number }
  /** Serves a new certificate and key on the TLS port from the next handshake on (a rotated serving certificate). */
  updateTls(pair: { cert: Buffer; key: Buffer }): void
  close(): Promise<void>
}

function send (res: ServerResponse, code: number, body: unknown, type = 'application/json'): void {
  const text = typeof body === 'string' ? body : JSON.stringify(body)
  res.writeHead(code, { 'content-type': type, 'content-length': Buffer.byteLength(text) })
  res.end(text)
}

function status (res: ServerResponse, code: number, reason: string, message: string): void {
  send(res, code, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code })
}

function intParam (u: URL, name: string): number | undefined {
  const v = u.searchParams.get(name)
  if (v === null || v === '') return undefined
  const n = Number(v)
  if (!Number.isInteger(n)) throw new Error(`${name} must be an integer`)
  return n
}

export function createAgentServer (o: AgentServerOptions): AgentServer {
  const servers: Array<{ which: 'port' | 'readOnlyPort' | 'healthzPort'; server: Server }> = []
  let tls = o.tls
  let https: ReturnType<typeof createHttpsServer> | undefined
  const logAttach = createLogAttach()

  function secureOptions (t: ServingTls): Parameters<typeof createHttpsServer>[0] & object {
    return { cert: t.cert, key: t.key, minVersion: t.minVersion, ciphers: t.ciphers, requestCert: o.clientCaPem !== undefined, rejectUnauthorized: false, ca: o.clientCaPem }
  }

  function healthz (res: ServerResponse, url: URL): void {
    const checks = o.view.healthChecks()
    const ok = checks.every(c => c.ok)
    if (url.searchParams.has('verbose')) {
      const lines = checks.map(c => c.ok ? `[+]${c.name} ok` : `[-]${c.name} failed: ${c.message ?? 'reason withheld'}`)
      send(res, ok ? 200 : 500, `${lines.join('\n')}\nhealthz check ${ok ? 'passed' : 'failed'}\n`, 'text/plain; charset=utf-8')
    } else {
      send(res, ok ? 200 : 500, ok ? 'ok' : 'healthz check failed', 'text/plain; charset=utf-8')
    }
  }

  async function logs (req: IncomingMessage, res: ServerResponse, url: URL, parts: string[]): Promise<void> {
    const [, , namespace, pod, container] = parts
    if (!namespace || !pod || !container) { status(res, 400, 'BadRequest', 'path must be /containerLogs/{namespace}/{pod}/{container}'); return }
    const previous = url.searchParams.get('previous') === 'true'
    if (!o.view.hasContainer(namespace, pod, container)) { status(res, 404, 'NotFound', `container "${container}" in pod "${pod}" not found`); return }
    const waiting = previous ? undefined : o.view.containerWaiting(namespace, pod, container)
    // The kubelet's answers for a container without the asked-for log (kubectl prints them as they are).
    if (waiting !== undefined) { status(res, 400, 'BadRequest', `container "${container}" in pod "${pod}" is waiting to start: ${waiting}`); return }
    const path = o.view.containerLogPath(namespace, pod, container, previous)
    if (path === undefined) { status(res, 400, 'BadRequest', `previous terminated container "${container}" in pod "${pod}" not found`); return }
    const q: LogQuery = {
      tailLines: intParam(url, 'tailLines'),
      limitBytes: intParam(url, 'limitBytes'),
      sinceSeconds: intParam(url, 'sinceSeconds'),
      timestamps: url.searchParams.get('timestamps') === 'true',
      follow: url.searchParams.get('follow') === 'true'
    }
    res.writeHead(200, { 'content-type': 'text/plain' })
    const abort = new AbortController()
    req.on('close', () => abort.abort())
    await writeContainerLog(path, q, res, () => o.view.containerRunning(namespace, pod, container), abort.signal)
  }

  async function route (req: IncomingMessage, res: ServerResponse, readOnly: boolean): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://orchlet')
    const parts = url.pathname.split('/')
    const first = parts[1] ?? ''
    if (req.method !== 'GET' && req.method !== 'HEAD') { status(res, 405, 'MethodNotAllowed', `${req.method ?? ''} is not supported`); return }
    if (first === 'healthz') { healthz(res, url); return }
    if (first === 'pods' && parts.length <= 3) {
      send(res, 200, { kind: 'PodList', apiVersion: 'v1', metadata: {}, items: o.view.pods() })
      return
    }
    if (first === 'stats' && (url.pathname === '/stats/summary' || url.pathname === '/stats/summary/')) {
      send(res, 200, await o.view.statsSummary())
      return
    }
    if (first === 'containerLogs' && !readOnly && o.enableDebuggingHandlers) { await logs(req, res, url, parts); return }
    // The kubelet serves /configz among its debugging handlers (authenticated port only), /metrics on both ports.
    if (url.pathname === '/configz' && !readOnly && o.enableDebuggingHandlers && o.configz !== undefined) { send(res, 200, o.configz()); return }
    const scrape = o.metrics?.get(url.pathname)
    if (scrape !== undefined) { send(res, 200, await scrape(), PROMETHEUS_CONTENT_TYPE); return }
    status(res, 404, 'NotFound', `the server could not find the requested resource (${url.pathname})`)
  }

  async function secured (req: IncomingMessage, res: ServerResponse): Promise<void> {
    const user = await o.authenticate(req)
    // The kubelet answers these two in plain text, as net/http's http.Error does.
    if (user === null) { send(res, 401, 'Unauthorized\n', 'text/plain; charset=utf-8'); return }
    const attrs = attributesFor(req.method ?? 'GET', new URL(req.url ?? '/', 'http://orchlet').pathname, o.nodeName)
    const decision = await o.authorize(user, attrs)
    if (!decision.allowed) {
      send(res, 403, `Forbidden (user=${user.name}, verb=${attrs.verb}, resource=${attrs.resource}, subresource=${attrs.subresource})${decision.reason ? `: ${decision.reason}` : ''}\n`, 'text/plain; charset=utf-8')
      return
    }
    await route(req, res, false)
  }

  /** Upgrade requests on the TLS port: /exec, /attach and /portForward, authenticated and authorized as any request. */
  async function upgrade (req: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    const user = await o.authenticate(req)
    if (user === null) { answerStatus(socket, 401, 'Unauthorized', 'Unauthorized'); return }
    const url = new URL(req.url ?? '/', 'http://orchlet')
    const attrs = attributesFor(req.method ?? 'GET', url.pathname, o.nodeName)
    const decision = await o.authorize(user, attrs)
    if (!decision.allowed) { answerStatus(socket, 403, 'Forbidden', `Forbidden (user=${user.name}, verb=${attrs.verb}, resource=${attrs.resource}, subresource=${attrs.subresource})`); return }
    const target = o.enableDebuggingHandlers ? parseStreamingPath(url.pathname) : undefined
    const lookup = o.view.runtimeIds
    if (target === undefined || lookup === undefined) { answerStatus(socket, 404, 'NotFound', `the server could not find the requested resource (${url.pathname})`); return }
    const ids = lookup(target.namespace, target.pod, target.container)
    if (target.kind === 'attach' && ids !== undefined && ids.runtime.runtime.streamingUrl === undefined && (isWebSocketUpgrade(req) || isSpdyUpgrade(req))) {
      // No streaming server (WebAssembly): attach shows the container's output from its log.
      const path = o.view.containerLogPath(target.namespace, target.pod, target.container!, false)
      if (path === undefined) throw new StreamingError(400, 'BadRequest', `container "${target.container!}" in pod "${target.pod}" is waiting to start`)
      logAttach.serve(req, socket, head, path, () => o.view.containerRunning(target.namespace, target.pod, target.container!))
      return
    }
    const { runtime, request } = streamingRequest(target, url.searchParams, lookup)
    await pipeUpgrade(req, socket, head, await streamingUrl(runtime, request))
  }

  function onUpgrade (req: IncomingMessage, socket: Duplex, head: Buffer): void {
    socket.on('error', () => socket.destroy())
    upgrade(req, socket, head).catch(err => {
      if (err instanceof StreamingError) { answerStatus(socket, err.code, err.reason, err.message); return }
      o.logger.warn({ err: (err as Error).message, path: req.url }, 'orchlet streaming request failed')
      answerStatus(socket, 500, 'InternalError', (err as Error).message)
    })
  }

  function guard (fn: (req: IncomingMessage, res: ServerResponse) => Promise<void>) {
    return (req: IncomingMessage, res: ServerResponse): void => {
      fn(req, res).catch(err => {
        o.logger.warn({ err: (err as Error).message, path: req.url }, 'orchlet server request failed')
        if (!res.headersSent) status(res, 500, 'InternalError', (err as Error).message)
        else res.destroy()
      })
    }
  }

  async function listen (server: Server, host: string, port: number): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject)
      server.listen(port, host, () => { server.off('error', reject); resolve() })
    })
  }

  return {
    async start () {
      if (o.enableServer) {
        if (tls === undefined) throw new Error('the orchlet server needs TLS material')
        https = createHttpsServer(secureOptions(tls), guard(secured))
        https.on('upgrade', onUpgrade)
        await listen(https, o.address, o.port)
        servers.push({ which: 'port', server: https })
        if (o.readOnlyPort > 0) {
          const ro = createHttpServer(guard(async (req, res) => { await route(req, res, true) }))
          await listen(ro, o.address, o.readOnlyPort)
          servers.push({ which: 'readOnlyPort', server: ro })
        }
      }
      if (o.healthzPort > 0) {
        const hz = createHttpServer(guard(async (req, res) => {
          const url = new URL(req.url ?? '/', 'http://orchlet')
          if (url.pathname === '/healthz') healthz(res, url)
          else status(res, 404, 'NotFound', 'not found')
        }))
        await listen(hz, o.healthzBindAddress, o.healthzPort)
        servers.push({ which: 'healthzPort', server: hz })
      }
    },
    ports () {
      const out: ReturnType<AgentServer['ports']> = {}
      for (const s of servers) out[s.which] = (s.server.address() as AddressInfo).port
      return out
    },
    updateTls (pair) {
      if (tls === undefined) throw new Error('the orchlet server has no TLS port')
      tls = { ...tls, cert: pair.cert, key: pair.key }
      // setSecureContext takes the whole context: the version, ciphers and client CA stay as configured.
      https?.setSecureContext(secureOptions(tls))
    },
    async close () {
      await Promise.all(servers.map(async s => {
        s.server.closeAllConnections?.()
        await new Promise<void>(resolve => s.server.close(() => resolve()))
      }))
      servers.length = 0
      logAttach.close()
    }
  }
}
