// A REST client of the API server shared by the orchlet and the controllers: every call through undici, rate limited, Status errors typed.

import { Pool } from './undici-core.js'
import type { Connection } from './kubeconfig.js'
import { createTokenBucket, type RateLimiter, type Clock, systemClock } from './rate-limiter.js'

/** A failed call: `status` is the HTTP code, `reason` the Status reason when the server sent one. */
export class ApiClientError extends Error {
  readonly status: number
  readonly reason: string
  readonly body: unknown
  constructor (status: number, reason: string, message: string, body: unknown) {
    super(message)
    this.name = 'ApiClientError'
    this.status = status
    this.reason = reason
    this.body = body
  }
}

export function isNotFound (err: unknown): boolean { return err instanceof ApiClientError && err.status === 404 }
export function isConflict (err: unknown): boolean { return err instanceof ApiClientError && err.status === 409 }
export function isAlreadyExists (err: unknown): boolean {
  return err instanceof ApiClientError && err.status === 409 && err.reason === 'AlreadyExists'
}

export interface ApiClientOptions {
  connection: Connection
  qps: number
  burst: number
  /** --orch-api-content-type; JSON is always accepted as a fallback. */
  contentType: string
  userAgent: string
  clock?: Clock
}

export type JsonObject = Record<string, unknown>

export interface CallOptions {
  query?: Record<string, string | number | boolean | undefined>
  body?: unknown
  contentType?: string
  /** Heartbeats (node status, lease) and events do not count against --orch-api-qps. */
  exempt?: boolean
  signal?: AbortSignal
}

export interface WatchEvent { type: string; object: JsonObject }

export interface ApiClient {
  call(method: string, path: string, opts?: CallOptions): Promise<JsonObject>
  get(path: string, opts?: CallOptions): Promise<JsonObject>
  create(path: string, body: JsonObject, opts?: CallOptions): Promise<JsonObject>
  update(path: string, body: JsonObject, opts?: CallOptions): Promise<JsonObject>
  mergePatch(path: string, patch: JsonObject, opts?: CallOptions): Promise<JsonObject>
  delete(path: string, opts?: CallOptions): Promise<JsonObject>
  /** Streams watch events until the server ends the stream or `signal` aborts; resolves then. */
  watch(path: string, query: Record<string, string | number | boolean | undefined>, onEvent: (e: WatchEvent) => void, signal?: AbortSignal): Promise<void>
  /**
   * New credentials (a rotated client certificate): calls from now on use new connections made with `conn`; the old
   * connections finish what they carry (watches included) and are closed once idle.
   */
  setConnection(conn: Connection): void
  close(): Promise<void>
}

function queryString (query?: CallOptions['query']): string {
  if (query === undefined) return ''
  const params = new URLSearchParams()
  for (const [k, v] of Object.entries(query)) if (v !== undefined) params.set(k, String(v))
  const s = params.toString()
  return s === '' ? '' : `?${s}`
}

async function readError (status: number, text: string): Promise<ApiClientError> {
  let body: unknown = text
  let reason = ''
  let message = `HTTP ${status}`
  try {
    body = JSON.parse(text)
    const st = body as { reason?: string; message?: string }
    reason = st.reason ?? ''
    message = st.message ?? message
  } catch { if (text !== '') message = `${message}: ${text.slice(0, 200)}` }
  return new ApiClientError(status, reason, message, body)
}

interface Pools { connection: Connection; basePath: string; pool: Pool; watchPool: Pool }

function openPools (connection: Connection): Pools {
  const url = new URL(connection.server)
  const connect = url.protocol === 'https:'
    ? {
        ca: connection.caPem,
        cert: connection.clientCertPem,
        key: connection.clientKeyPem,
        rejectUnauthorized: !connection.insecureSkipTlsVerify
      }
    : undefined
  return {
    connection,
    basePath: url.pathname.replace(/\/+$/, ''),
    pool: new Pool(url.origin, { connections: 8, pipelining: 1, connect }),
    // Each watch holds its connection for its whole life: watches get their own unbounded pool, so calls never wait behind them.
    watchPool: new Pool(url.origin, { pipelining: 1, connect })
  }
}

export function createApiClient (opts: ApiClientOptions): ApiClient {
  let active = openPools(opts.connection)
  // Pools replaced by setConnection that still carry requests; close() ends them.
  const retiring = new Set<Pools>()
  const limiter: RateLimiter = createTokenBucket(opts.qps, opts.burst, opts.clock ?? systemClock)
  // JSON bodies always; the Accept header names the configured type first so a server that
  // speaks it may answer in it, and JSON is the fallback this client decodes.
  const accept = opts.contentType === 'application/json' ? 'application/json' : `${opts.contentType}, application/json`

  function headers (contentType?: string): Record<string, string> {
    const h: Record<string, string> = { accept: accept.includes('protobuf') ? 'application/json' : accept, 'user-agent': opts.userAgent }
    if (active.connection.token !== undefined) h.authorization = `Bearer ${active.connection.token}`
    if (contentType !== undefined) h['content-type'] = contentType
    return h
  }

  async function call (method: string, path: string, o: CallOptions = {}): Promise<JsonObject> {
    if (o.exempt !== true) await limiter.acquire()
    const body = o.body === undefined ? undefined : JSON.stringify(o.body)
    const { pool, basePath } = active
    const res = await pool.request({
      method: method as 'GET',
      path: basePath + path + queryString(o.query),
      headers: headers(body === undefined ? undefined : (o.contentType ?? 'application/json')),
      body,
      signal: o.signal
    })
    const text = await res.body.text()
    if (res.statusCode >= 400) throw await readError(res.statusCode, text)
    return text === '' ? {} : JSON.parse(text) as JsonObject
  }

  async function watch (path: string, query: Record<string, string | number | boolean | undefined>, onEvent: (e: WatchEvent) => void, signal?: AbortSignal): Promise<void> {
    await limiter.acquire()
    const { watchPool, basePath } = active
    const res = await watchPool.request({
      method: 'GET',
      path: basePath + path + queryString({ ...query, watch: 'true' }),
      headers: headers(),
      signal
    })
    if (res.statusCode >= 400) throw await readError(res.statusCode, await res.body.text())
    let pending = ''
    try {
      for await (const chunk of res.body) {
        pending += (chunk as Buffer).toString('utf8')
        let nl: number
        while ((nl = pending.indexOf('\n')) >= 0) {
          const line = pending.slice(0, nl).trim()
          pending = pending.slice(nl + 1)
          if (line !== '') onEvent(JSON.parse(line) as WatchEvent)
        }
      }
    } catch (err) {
      if (signal?.aborted === true) return
      throw err
    }
  }

  return {
    call,
    get: async (path, o) => await call('GET', path, o),
    create: async (path, body, o) => await call('POST', path, { ...o, body }),
    update: async (path, body, o) => await call('PUT', path, { ...o, body }),
    mergePatch: async (path, patch, o) => await call('PATCH', path, { ...o, body: patch, contentType: 'application/merge-patch+json' }),
    delete: async (path, o) => await call('DELETE', path, o),
    watch,
    setConnection (conn) {
      const old = active
      active = openPools(conn)
      retiring.add(old)
      // Pool.close waits for the requests under way, then closes the connections.
      void Promise.all([old.pool.close(), old.watchPool.close()]).catch(() => {}).finally(() => retiring.delete(old))
    },
    // In-flight requests get a moment to finish; a long-lived one (a watch) must not hold shutdown up.
    close: async () => {
      const { pool, watchPool } = active
      let timer: NodeJS.Timeout | undefined
      const grace = new Promise<'timeout'>(resolve => { timer = setTimeout(() => resolve('timeout'), 2000) })
      const outcome = await Promise.race([pool.close().then(() => 'closed' as const), grace])
      clearTimeout(timer)
      if (outcome === 'timeout') await pool.destroy()
      // Open watches never finish by themselves.
      await watchPool.destroy()
      for (const old of retiring) await Promise.all([old.pool.destroy(), old.watchPool.destroy()])
      retiring.clear()
    }
  }
}
