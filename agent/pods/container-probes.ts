// The probes of one running container attempt and what their verdicts do: started/ready flags, Unhealthy events, kills.

import type { RuntimeService } from '../runtime/runtime.js'
import type { ContainerRecord } from './pod-status.js'
import type { Container } from './pod-types.js'
import type { PodEvents } from './pod-events.js'
import { startProbeWorker, type ProbeWorker } from './probes.js'

export interface AttemptProbesOptions {
  container: Container
  isInit: boolean
  /** The attempt's record; its flags change only while it is still the container's current record. */
  record: ContainerRecord
  current: () => ContainerRecord | undefined
  /** Where httpGet and tcpSocket probes go when they name no host (the pod IP). */
  host: string
  runtime: RuntimeService
  events: PodEvents
  /** Grace period of a kill after a failed liveness or startup probe. */
  killGrace: number
  logger: { info(o: object, m?: string): void }
  podName: string
  /** A verdict changed: the pod should sync. */
  changed: () => void
  /** Every probe attempt's outcome, by probe kind (prober_probe_total); none without. */
  probeResult?: (kind: 'startup' | 'liveness' | 'readiness', ok: boolean) => void
}

export interface AttemptProbes { stop(): void }

/**
 * Starts the attempt's startup, liveness and readiness probes (none for init containers). Liveness and
 * readiness wait for the startup probe; a failed liveness or startup probe kills the attempt.
 */
export function startAttemptProbes (o: AttemptProbesOptions): AttemptProbes {
  const c = o.container
  const r = o.record
  const id = r.id!
  const workers: ProbeWorker[] = []
  const stop = (): void => { for (const w of workers.splice(0)) w.stop() }
  const mine = (): ContainerRecord | undefined => o.current()?.id === id ? o.current() : undefined
  let startupOk = c.startupProbe === undefined
  r.started = startupOk
  r.ready = !o.isInit && c.readinessProbe === undefined
  if (o.isInit) return { stop }
  const target = {
    host: o.host,
    container: c,
    exec: async (cmd: string[], timeout: number) => {
      const res = await o.runtime.execSync(id, cmd, timeout)
      return { exitCode: res.exitCode, output: Buffer.concat([res.stdout, res.stderr]).toString('utf8') }
    }
  }
  const unhealthy = (kind: string) => (message: string) => o.events.container(c.name, 'Warning', 'Unhealthy', `${kind} probe failed: ${message}`)
  const kill = async (kind: string): Promise<void> => {
    o.logger.info({ pod: o.podName, container: c.name }, `container failed ${kind} probe, will be restarted`)
    o.events.container(c.name, 'Normal', 'Killing', `Container ${c.name} failed ${kind} probe, will be restarted`)
    stop()
    try { await o.runtime.stopContainer(id, o.killGrace) } catch { /* refreshed on the next sync */ }
    o.changed()
  }
  if (c.startupProbe) {
    workers.push(startProbeWorker({ kind: 'startup', probe: c.startupProbe, target, active: () => true, onResult: ok => o.probeResult?.('startup', ok), onFailure: unhealthy('Startup'), onChange: (ok) => {
      if (ok) {
        startupOk = true
        const cur = mine()
        if (cur !== undefined) { cur.started = true; cur.ready = c.readinessProbe === undefined }
      } else void kill('startup')
      o.changed()
    } }))
  }
  if (c.livenessProbe) {
    workers.push(startProbeWorker({ kind: 'liveness', probe: c.livenessProbe, target, active: () => startupOk, onResult: ok => o.probeResult?.('liveness', ok), onFailure: unhealthy('Liveness'), onChange: (ok) => { if (!ok) void kill('liveness') } }))
  }
  if (c.readinessProbe) {
    workers.push(startProbeWorker({ kind: 'readiness', probe: c.readinessProbe, target, active: () => startupOk, onResult: ok => o.probeResult?.('readiness', ok), onFailure: unhealthy('Readiness'), onChange: (ok) => {
      const cur = mine()
      if (cur !== undefined) cur.ready = ok && cur.state === 'running'
      o.changed()
    } }))
  }
  return { stop }
}
