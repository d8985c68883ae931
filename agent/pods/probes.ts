// Liveness, readiness and startup probes: httpGet, tcpSocket and exec, with Kubernetes' thresholds and timing.

import { connect } from 'node:net'
import { Agent, request } from '../../apiserver/client/undici-core.js'
import type { Container, Probe } from './pod-types.js'
import { RuntimeError } from '../runtime/runtime.js'

export type ProbeKind = 'liveness' | 'readiness' | 'startup'

export interface ProbeTarget {
  host: string
  container: Container
  /** Runs a command in the container; resolves with its exit code and combined output. Rejects when the runtime cannot exec. */
  exec: (cmd: string[], timeoutSeconds: number) => Promise<{ exitCode: number; output: string }>
}

export interface ProbeOutcome { ok: boolean; message: string }

function resolvePort (port: number | string, c: Container): number {
  if (typeof port === 'number') return port
  if (/^\d+$/.test(port)) return Number(port)
  const named = c.ports?.find(p => p.name === port)
  if (named === undefined) throw new Error(`port "${port}" is not a named port of container ${c.name}`)
  return named.containerPort
}

/** Go's net error text for a failed dial (`connect: connection refused`), from Node's error code. */
export function goDialError (host: string, port: number, err: unknown): string {
  const e = err as { code?: string; cause?: { code?: string }; message?: string }
  const code = e.code ?? e.cause?.code
  const hostPort = `${host.includes(':') ? `[${host}]` : host}:${port}`
  switch (code) {
    case 'ECONNREFUSED': return `dial tcp ${hostPort}: connect: connection refused`
    case 'EHOSTUNREACH': return `dial tcp ${hostPort}: connect: no route to host`
    case 'ENETUNREACH': return `dial tcp ${hostPort}: connect: network is unreachable`
    case 'ECONNRESET': return `read tcp ${hostPort}: read: connection reset by peer`
    case 'ETIMEDOUT': case 'UND_ERR_CONNECT_TIMEOUT': return `dial tcp ${hostPort}: i/o timeout`
    case 'ENOTFOUND': case 'EAI_AGAIN': return `dial tcp: lookup ${host}: no such host`
    default: return `dial tcp ${hostPort}: ${e.message ?? String(err)}`
  }
}

const insecure = new Agent({ connect: { rejectUnauthorized: false } })

/** Runs one probe once. Never throws: failures come back as `{ok: false, message}`. */
export async function runProbe (p: Probe, t: ProbeTarget): Promise<ProbeOutcome> {
  const timeoutMs = (p.timeoutSeconds ?? 1) * 1000
  try {
    if (p.httpGet !== undefined) {
      const g = p.httpGet
      const scheme = (g.scheme ?? 'HTTP').toLowerCase()
      const host = g.host ?? t.host
      const port = resolvePort(g.port, t.container)
      const url = `${scheme}://${host.includes(':') ? `[${host}]` : host}:${port}${g.path ?? '/'}`
      const headers: Record<string, string> = { 'user-agent': 'orch-probe/1.29' }
      for (const h of g.httpHeaders ?? []) headers[h.name.toLowerCase()] = h.value
      let res
      try {
        res = await request(url, { headers, headersTimeout: timeoutMs, bodyTimeout: timeoutMs, dispatcher: scheme === 'https' ? insecure : undefined, maxRedirections: 0 } as Parameters<typeof request>[1])
      } catch (err) {
        // Go's http.Client error: Get "<url>": <net error>.
        const code = (err as { code?: string }).code
        const why = code === 'UND_ERR_HEADERS_TIMEOUT' ? 'context deadline exceeded (Client.Timeout exceeded while awaiting headers)' : goDialError(host, port, err)
        return { ok: false, message: `Get "${url}": ${why}` }
      }
      await res.body.dump()
      const ok = res.statusCode >= 200 && res.statusCode < 400
      return { ok, message: ok ? '' : `HTTP probe failed with statuscode: ${res.statusCode}` }
    }
    if (p.tcpSocket !== undefined) {
      const port = resolvePort(p.tcpSocket.port, t.container)
      const host = p.tcpSocket.host ?? t.host
      await new Promise<void>((resolve, reject) => {
        const socket = connect({ host, port })
        const timer = setTimeout(() => { socket.destroy(); reject(new Error(goDialError(host, port, { code: 'ETIMEDOUT' }))) }, timeoutMs)
        socket.once('connect', () => { clearTimeout(timer); socket.destroy(); resolve() })
        socket.once('error', err => { clearTimeout(timer); reject(new Error(goDialError(host, port, err))) })
      })
      return { ok: true, message: '' }
    }
    if (p.exec !== undefined) {
      // The kubelet's exec prober reports the command's combined output as the failure message.
      const command = p.exec.command ?? []
      try {
        const r = await t.exec(command, p.timeoutSeconds ?? 1)
        return { ok: r.exitCode === 0, message: r.exitCode === 0 ? '' : r.output }
      } catch (err) {
        // The kubelet turns a deadline hit by ExecSync into its own timeout error.
        if (err instanceof RuntimeError && err.code === 'DeadlineExceeded') return { ok: false, message: `command "${command.join(' ')}" timed out` }
        throw err
      }
    }
    return { ok: false, message: 'probe has no handler (httpGet, tcpSocket or exec)' }
  } catch (err) {
    return { ok: false, message: (err as Error).message }
  }
}

export interface ProbeWorker { stop(): void; result(): boolean | undefined }

export interface ProbeWorkerOptions {
  kind: ProbeKind
  probe: Probe
  target: ProbeTarget
  /** Called when the probe's verdict changes (after success/failure thresholds). */
  onChange: (ok: boolean, message: string) => void
  /** Whether the probe may run now (liveness and readiness wait for startup to pass). */
  active: () => boolean
  /** Called after every failed attempt, before thresholds (the kubelet records an Unhealthy event each time). */
  onFailure?: (message: string) => void
  /** Called after every attempt with its raw outcome (prober_probe_total). */
  onResult?: (ok: boolean) => void
}

/**
 * Probes periodically. The verdict starts unknown (undefined) and flips only after `successThreshold`
 * consecutive successes or `failureThreshold` consecutive failures.
 */
export function startProbeWorker (o: ProbeWorkerOptions): ProbeWorker {
  const p = o.probe
  const period = Math.max(1, p.periodSeconds ?? 10) * 1000
  const successThreshold = Math.max(1, p.successThreshold ?? 1)
  const failureThreshold = Math.max(1, p.failureThreshold ?? 3)
  let verdict: boolean | undefined
  let successes = 0
  let failures = 0
  let stopped = false
  let timer: NodeJS.Timeout | undefined

  async function tick (): Promise<void> {
    if (stopped) return
    if (o.active()) {
      const outcome = await runProbe(p, o.target)
      if (stopped) return
      o.onResult?.(outcome.ok)
      if (outcome.ok) { successes++; failures = 0 } else { failures++; successes = 0; o.onFailure?.(outcome.message) }
      const next = successes >= successThreshold ? true : failures >= failureThreshold ? false : verdict
      if (next !== undefined && next !== verdict) {
        verdict = next
        o.onChange(next, outcome.message)
      }
    }
    if (!stopped) timer = setTimeout(() => { void tick() }, period)
  }

  timer = setTimeout(() => { void tick() }, Math.max(0, p.initialDelaySeconds ?? 0) * 1000)
  return {
    stop () { stopped = true; if (timer !== undefined) clearTimeout(timer) },
    result: () => verdict
  }
}
