// Liveness, readiness and startup probes: httpGet, tcpSocket and exec, with Kubernetes' thresholds and timing.

import { connect } from 'node:net'
import { Agent, request } from 'undici'
import type { Container, Probe } from './pod-types.js'

export type ProbeKind = 'liveness' | 'readiness' | 'startup'

export interface ProbeTarget {
  host: string
  container: Container
  /** Runs a command in the container; resolves with its exit code. Rejects when the runtime cannot exec. */
  exec: (cmd: string[], timeoutSeconds: number) => Promise<number>
}

export interface ProbeOutcome { ok: boolean; message: string }

function resolvePort (port: number | string, c: Container): number {
  if (typeof port === 'number') return port
  if (/^\d+$/.test(port)) return Number(port)
  const named = c.ports?.find(p => p.name === port)
  if (named === undefined) throw new Error(`port "${port}" is not a named port of container ${c.name}`)
  return named.containerPort
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
      const url = `${scheme}://${host.includes(':') ? `[${host}]` : host}:${resolvePort(g.port, t.container)}${g.path ?? '/'}`
      const headers: Record<string, string> = { 'user-agent': 'orch-probe/1.29' }
      for (const h of g.httpHeaders ?? []) headers[h.name.toLowerCase()] = h.value
      const res = await request(url, { headers, headersTimeout: timeoutMs, bodyTimeout: timeoutMs, dispatcher: scheme === 'https' ? insecure : undefined, maxRedirections: 0 } as Parameters<typeof request>[1])
      await res.body.dump()
      const ok = res.statusCode >= 200 && res.statusCode < 400
      return { ok, message: ok ? '' : `HTTP probe failed with statuscode: ${res.statusCode}` }
    }
    if (p.tcpSocket !== undefined) {
      const port = resolvePort(p.tcpSocket.port, t.container)
      const host = p.tcpSocket.host ?? t.host
      await new Promise<void>((resolve, reject) => {
        const socket = connect({ host, port })
        const timer = setTimeout(() => { socket.destroy(); reject(new Error(`dial tcp ${host}:${port}: i/o timeout`)) }, timeoutMs)
        socket.once('connect', () => { clearTimeout(timer); socket.destroy(); resolve() })
        socket.once('error', err => { clearTimeout(timer); reject(new Error(`dial tcp ${host}:${port}: ${err.message}`)) })
      })
      return { ok: true, message: '' }
    }
    if (p.exec !== undefined) {
      const code = await t.exec(p.exec.command ?? [], p.timeoutSeconds ?? 1)
      return { ok: code === 0, message: code === 0 ? '' : `command exited with code ${code}` }
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
