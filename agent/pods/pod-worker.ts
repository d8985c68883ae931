// One pod's sync loop: sandbox, init containers in order, containers with restart policy and back-off, probes, stop.

import { join } from 'node:path'
import type { ApiClient } from '../apiclient/client.js'
import type { ContainerRuntime, ContainerStatus as RuntimeContainerStatus, PodSandboxConfig } from '../runtime/runtime.js'
import { RuntimeError } from '../runtime/runtime.js'
import type { Backoff } from './backoff.js'
import { containerConfig, ContainerConfigError, podLogDir, sandboxConfig } from './container-config.js'
import { buildPodStatus, type ContainerRecord } from './pod-status.js'
import type { Container, Pod, PodStatus } from './pod-types.js'
import { startProbeWorker, type ProbeWorker } from './probes.js'
import { cleanupPodDir, prepareVolumes, VolumeError } from './volumes.js'
import { ensureImage, ImagePullError } from './images.js'
import type { EventRecorder } from '../events/recorder.js'
import { createPodEvents } from './pod-events.js'

export interface PodWorkerDeps {
  runtimeFor(handler: string): ContainerRuntime
  rootDir: string
  logsRoot: string
  hostIP: string
  client?: ApiClient
  cpuCfsQuota: boolean
  cfsPeriodUs: number
  backoff: Backoff
  now(): number
  /** Called after every sync whose status differs from the last one reported. */
  onStatus(pod: Pod, status: PodStatus): void
  logger: { info(o: object, m?: string): void; warn(o: object, m?: string): void }
  /** How often a running pod re-reads its containers from the runtime (the kubelet's relist period). */
  relistMs: number
  /** Where pod and container events go (the API server, or the log in standalone mode). */
  recorder: EventRecorder
}

export interface PodWorker {
  readonly uid: string
  pod(): Pod
  status(): PodStatus | undefined
  update(pod: Pod): void
  /** Stops every container within the grace period and removes the sandbox; resolves when done. */
  terminate(gracePeriodSeconds: number): Promise<void>
  /** The CRI log file of the current (or previous) attempt; undefined when that attempt never started. */
  containerLogPath(container: string, previous: boolean): string | undefined
  /** Why a container that never started has no log yet (the kubelet's "waiting to start" reason). */
  containerWaiting(container: string): string | undefined
  containerRunning(container: string): boolean
  /** True once the pod reached Succeeded/Failed or was terminated. */
  finished(): boolean
}

interface Slot { spec: Container; record?: ContainerRecord; previousLog?: string; currentLog?: string; probes: ProbeWorker[]; live?: boolean; readyProbe?: boolean; startupOk?: boolean; oldIds: string[] }

function nsToMs (ns: number): number { return Math.floor(ns / 1e6) }

export function createPodWorker (initial: Pod, d: PodWorkerDeps): PodWorker {
  let pod = initial
  const handler = pod.spec.runtimeClassName ?? ''
  const runtime = d.runtimeFor(handler)
  const key = (name: string) => `${pod.metadata.uid}/${name}`
  const events = createPodEvents(d.recorder, () => pod)
  const slots = new Map<string, Slot>()
  const initNames = (pod.spec.initContainers ?? []).map(c => c.name)
  for (const c of [...(pod.spec.initContainers ?? []), ...pod.spec.containers]) slots.set(c.name, { spec: c, probes: [], oldIds: [] })
  let sandboxId: string | undefined
  let sandboxCfg: PodSandboxConfig | undefined
  let volumes: Map<string, string> | undefined
  let startTime: number | undefined
  let terminal: { phase: 'Succeeded' | 'Failed'; reason?: string; message?: string } | undefined
  let terminating = false
  let done = false
  let lastStatus: PodStatus | undefined
  let lastJson = ''
  let podMessage: string | undefined
  let chain: Promise<void> = Promise.resolve()
  let queued = false
  const timer = setInterval(() => trigger(), d.relistMs)
  timer.unref()

  function trigger (): void {
    if (queued || done) return
    queued = true
    chain = chain.then(async () => {
      queued = false
      if (done) return
      try { await sync() } catch (err) {
        d.logger.warn({ pod: pod.metadata.name, err: (err as Error).message }, 'pod sync failed')
        // The pod stays Pending with the reason visible in its status, and is retried on the next relist.
        podMessage = (err as Error).message
        for (const s of slots.values()) if (s.record === undefined) waiting(s, 'ContainerCreating', podMessage)
        publish()
      }
    })
  }

  function publish (): void {
    const records = (names: string[]) => names.map(n => slots.get(n)?.record).filter((r): r is ContainerRecord => r !== undefined)
    const status = buildPodStatus({
      pod,
      init: records(initNames),
      containers: records(pod.spec.containers.map(c => c.name)),
      sandboxReady: sandboxId !== undefined && !terminating,
      hostIP: d.hostIP,
      startTime,
      terminal,
      previous: lastStatus
    }, d.now())
    if (podMessage !== undefined && status.message === undefined && status.phase === 'Pending') status.message = podMessage
    const json = JSON.stringify({ ...status, conditions: status.conditions?.map(c => ({ ...c, lastTransitionTime: '' })) })
    lastStatus = status
    if (json === lastJson) return
    lastJson = json
    d.onStatus(pod, status)
  }

  function waiting (slot: Slot, reason: string, message?: string): void {
    const prev = slot.record
    const lastTerminated = prev?.state === 'exited' ? terminatedOf(prev) : prev?.lastTerminated
    slot.record = { name: slot.spec.name, runtimeName: runtime.name, state: 'waiting', waitingReason: reason, waitingMessage: message, restartCount: prev?.restartCount ?? 0, imageRef: prev?.imageRef ?? '', lastTerminated, ready: false, started: false, id: prev?.id }
  }

  /**
   * Restart back-off as the kubelet applies it: the first restart is immediate and opens a window
   * (10s, doubling); a container that must restart inside the window waits in CrashLoopBackOff,
   * an image that failed to pull waits in ImagePullBackOff. Returns true when the slot must wait.
   */
  function heldBack (slot: Slot): boolean {
    const r = slot.record
    if (r === undefined) return false
    const until = d.backoff.until(key(slot.spec.name))
    if (r.waitingReason === 'ErrImagePull' || r.waitingReason === 'ImagePullBackOff') {
      if (until > d.now()) {
        if (r.waitingReason === 'ErrImagePull') events.container(slot.spec.name, 'Normal', 'BackOff', `Back-off pulling image "${slot.spec.image}"`)
        waiting(slot, 'ImagePullBackOff', r.waitingMessage)
        return true
      }
      return false
    }
    const restarting = r.id !== undefined && (r.state === 'exited' || r.waitingReason === 'CrashLoopBackOff')
    if (!restarting) return false
    if (until > d.now()) {
      if (r.state === 'exited') {
        waiting(slot, 'CrashLoopBackOff', `back-off restarting failed container ${slot.spec.name} in pod ${pod.metadata.name}`)
        const m = pod.metadata
        events.container(slot.spec.name, 'Warning', 'BackOff', `Back-off restarting failed container ${slot.spec.name} in pod ${m.name}_${m.namespace}(${m.uid})`)
      }
      return true
    }
    d.backoff.failed(key(slot.spec.name))
    return false
  }

  async function refresh (slot: Slot): Promise<void> {
    const r = slot.record
    if (r?.id === undefined || r.state === 'waiting') return
    let st: RuntimeContainerStatus
    try { st = await runtime.runtime.containerStatus(r.id) } catch (err) {
      if (err instanceof RuntimeError && err.code === 'NotFound') { r.state = 'exited'; r.exitCode = 137; r.reason = 'ContainerStatusUnknown'; r.finishedAt = d.now(); return }
      throw err
    }
    if (st.state === 'CONTAINER_EXITED') {
      if (r.state !== 'exited') stopProbes(slot)
      r.state = 'exited'
      r.exitCode = st.exitCode
      r.reason = st.reason || (st.exitCode === 0 ? 'Completed' : 'Error')
      r.message = st.message || undefined
      r.finishedAt = nsToMs(st.finishedAt)
      r.ready = false
    } else if (st.state === 'CONTAINER_RUNNING') {
      r.state = 'running'
      r.startedAt = nsToMs(st.startedAt)
    }
  }

  function stopProbes (slot: Slot): void {
    for (const p of slot.probes) p.stop()
    slot.probes = []
  }

  function startProbes (slot: Slot, isInit: boolean): void {
    const c = slot.spec
    const r = slot.record!
    const id = r.id!
    const target = {
      host: d.hostIP,
      container: c,
      exec: async (cmd: string[], timeout: number) => (await runtime.runtime.execSync(id, cmd, timeout)).exitCode
    }
    const unhealthy = (kind: string) => (message: string) => events.container(c.name, 'Warning', 'Unhealthy', `${kind} probe failed: ${message}`)
    slot.startupOk = c.startupProbe === undefined
    r.started = slot.startupOk
    r.ready = !isInit && c.readinessProbe === undefined
    if (isInit) return
    if (c.startupProbe) {
      slot.probes.push(startProbeWorker({ kind: 'startup', probe: c.startupProbe, target, active: () => true, onFailure: unhealthy('Startup'), onChange: (ok) => {
        if (ok) { slot.startupOk = true; if (slot.record?.id === id) { slot.record.started = true; slot.record.ready = c.readinessProbe === undefined } }
        else void killForProbe(slot, id, 'startup')
        trigger()
      } }))
    }
    if (c.livenessProbe) {
      slot.probes.push(startProbeWorker({ kind: 'liveness', probe: c.livenessProbe, target, active: () => slot.startupOk === true, onFailure: unhealthy('Liveness'), onChange: (ok) => { if (!ok) void killForProbe(slot, id, 'liveness') } }))
    }
    if (c.readinessProbe) {
      slot.probes.push(startProbeWorker({ kind: 'readiness', probe: c.readinessProbe, target, active: () => slot.startupOk === true, onFailure: unhealthy('Readiness'), onChange: (ok) => {
        if (slot.record?.id === id) slot.record.ready = ok && slot.record.state === 'running'
        trigger()
      } }))
    }
  }

  async function killForProbe (slot: Slot, id: string, kind: string): Promise<void> {
    d.logger.info({ pod: pod.metadata.name, container: slot.spec.name }, `container failed ${kind} probe, will be restarted`)
    events.container(slot.spec.name, 'Normal', 'Killing', `Container ${slot.spec.name} failed ${kind} probe, will be restarted`)
    stopProbes(slot)
    const grace = slot.spec.livenessProbe?.terminationGracePeriodSeconds ?? pod.spec.terminationGracePeriodSeconds ?? 30
    try { await runtime.runtime.stopContainer(id, grace) } catch { /* refreshed on the next sync */ }
    trigger()
  }

  async function start (slot: Slot, isInit: boolean): Promise<void> {
    const c = slot.spec
    const attempt = slot.record === undefined || slot.record.id === undefined ? (slot.record?.restartCount ?? 0) : slot.record.restartCount + 1
    const prev = slot.record
    let imageRef: string
    try {
      imageRef = await ensureImage(runtime, c, sandboxCfg!, events.forImage(c.name), d.now)
    } catch (err) {
      if (!(err instanceof ImagePullError)) throw err
      events.container(c.name, 'Warning', 'Failed', `Error: ${err.reason}`)
      d.backoff.failed(key(c.name))
      waiting(slot, err.reason, err.message)
      return
    }
    let config
    try {
      config = await containerConfig({ pod, container: c, attempt, volumes: volumes!, hostIP: d.hostIP, client: d.client, cpuCfsQuota: d.cpuCfsQuota, cfsPeriodUs: d.cfsPeriodUs })
    } catch (err) {
      if (!(err instanceof ContainerConfigError || err instanceof VolumeError)) throw err
      events.container(c.name, 'Warning', 'Failed', `Error: ${err.message}`)
      waiting(slot, 'CreateContainerConfigError', err.message)
      return
    }
    let id: string
    try {
      id = await runtime.runtime.createContainer(sandboxId!, config, sandboxCfg!)
    } catch (err) {
      waiting(slot, 'CreateContainerError', (err as Error).message)
      events.container(c.name, 'Warning', 'Failed', `Error: ${(err as Error).message}`)
      d.backoff.failed(key(c.name))
      return
    }
    events.container(c.name, 'Normal', 'Created', `Created container ${c.name}`)
    if (prev?.id !== undefined) slot.oldIds.push(prev.id)
    // Keep one dead container per container for `logs --previous`; remove older ones.
    while (slot.oldIds.length > 1) { const old = slot.oldIds.shift()!; runtime.runtime.removeContainer(old).catch(() => {}) }
    slot.previousLog = slot.currentLog
    slot.currentLog = join(sandboxCfg!.logDirectory, config.logPath)
    slot.record = { name: c.name, id, runtimeName: runtime.name, state: 'waiting', waitingReason: 'ContainerCreating', restartCount: attempt, imageRef, lastTerminated: prev?.state === 'exited' ? terminatedOf(prev) : prev?.lastTerminated, ready: false, started: false }
    try {
      await runtime.runtime.startContainer(id)
    } catch (err) {
      slot.record.state = 'exited'
      slot.record.exitCode = 128
      slot.record.reason = 'StartError'
      slot.record.message = (err as Error).message
      slot.record.finishedAt = d.now()
      events.container(c.name, 'Warning', 'Failed', `Error: ${(err as Error).message}`)
      d.backoff.failed(key(c.name))
      return
    }
    events.container(c.name, 'Normal', 'Started', `Started container ${c.name}`)
    slot.record.state = 'running'
    slot.record.startedAt = d.now()
    startProbes(slot, isInit)
  }

  function terminatedOf (r: ContainerRecord): ContainerRecord['lastTerminated'] {
    return { exitCode: r.exitCode ?? 0, reason: r.reason ?? 'Error', startedAt: new Date(r.startedAt ?? 0).toISOString().replace(/\.\d+Z$/, 'Z'), finishedAt: new Date(r.finishedAt ?? 0).toISOString().replace(/\.\d+Z$/, 'Z'), ...(r.id ? { containerID: `${runtime.name}://${r.id}` } : {}) }
  }

  function shouldRestart (r: ContainerRecord): boolean {
    const policy = pod.spec.restartPolicy ?? 'Always'
    return policy === 'Always' || (policy === 'OnFailure' && (r.exitCode ?? 0) !== 0)
  }

  async function ensureSandbox (): Promise<boolean> {
    if (volumes === undefined) {
      try { volumes = await prepareVolumes(pod, { rootDir: d.rootDir, client: d.client }) } catch (err) {
        if (!(err instanceof VolumeError)) throw err
        if (podMessage !== err.message) events.pod('Warning', 'FailedMount', `MountVolume.SetUp failed for volume "${err.volume}" : ${err.message.slice(`volume "${err.volume}": `.length)}`)
        podMessage = err.message
        for (const s of slots.values()) if (s.record === undefined) waiting(s, 'ContainerCreating', err.message)
        return false
      }
      podMessage = undefined
    }
    if (sandboxId === undefined) {
      sandboxCfg = sandboxConfig(pod, d.logsRoot, 0)
      sandboxId = await runtime.runtime.runPodSandbox(sandboxCfg, handler)
      startTime ??= d.now()
    }
    return true
  }

  async function syncInit (): Promise<boolean> {
    for (const name of initNames) {
      const slot = slots.get(name)!
      await refresh(slot)
      const r = slot.record
      if (r?.state === 'exited' && r.exitCode === 0) continue
      if (r?.state === 'running') return false
      if (r?.state === 'exited') {
        if ((pod.spec.restartPolicy ?? 'Always') === 'Never') {
          terminal = { phase: 'Failed', reason: undefined, message: `init container ${name} failed with exit code ${r.exitCode ?? 0}` }
          return false
        }
      }
      if (!heldBack(slot)) await start(slot, true)
      return false
    }
    return true
  }

  async function syncContainers (): Promise<void> {
    for (const c of pod.spec.containers) {
      const slot = slots.get(c.name)!
      await refresh(slot)
      const r = slot.record
      if (r?.state === 'running') continue
      if (r?.state === 'exited' && !shouldRestart(r)) continue
      if (!heldBack(slot)) await start(slot, false)
    }
    const records = pod.spec.containers.map(c => slots.get(c.name)!.record)
    const allExited = records.every(r => r?.state === 'exited')
    if (allExited && !records.some(r => r !== undefined && shouldRestart(r))) {
      const failed = records.some(r => (r?.exitCode ?? 0) !== 0)
      terminal = { phase: failed ? 'Failed' : 'Succeeded' }
    }
  }

  async function sync (): Promise<void> {
    if (terminating || terminal !== undefined) { publish(); return }
    const deadline = pod.spec.activeDeadlineSeconds
    if (deadline !== undefined && startTime !== undefined && d.now() - startTime > deadline * 1000) {
      terminal = { phase: 'Failed', reason: 'DeadlineExceeded', message: `Pod was active on the node longer than the specified deadline` }
      events.pod('Normal', 'DeadlineExceeded', terminal.message!)
      await stopAll(pod.spec.terminationGracePeriodSeconds ?? 30)
      publish()
      return
    }
    if (await ensureSandbox()) {
      if (await syncInit()) await syncContainers()
    }
    if (terminal !== undefined) for (const s of slots.values()) stopProbes(s)
    publish()
  }

  async function stopAll (grace: number): Promise<void> {
    const running = [...slots.values()].filter(s => s.record?.id !== undefined && s.record.state !== 'exited')
    await Promise.all(running.map(async s => {
      stopProbes(s)
      events.container(s.spec.name, 'Normal', 'Killing', `Stopping container ${s.spec.name}`)
      try { await runtime.runtime.stopContainer(s.record!.id!, grace) } catch (err) {
        if (!(err instanceof RuntimeError && err.code === 'NotFound')) throw err
      }
    }))
    for (const s of running) await refresh(s)
  }

  return {
    uid: pod.metadata.uid,
    pod: () => pod,
    status: () => lastStatus,
    update (next) { pod = next; trigger() },
    async terminate (grace) {
      terminating = true
      clearInterval(timer)
      await chain
      await stopAll(grace)
      for (const s of slots.values()) stopProbes(s)
      publish()
      if (sandboxId !== undefined) {
        try { await runtime.runtime.stopPodSandbox(sandboxId) } catch { /* gone already */ }
        for (const s of slots.values()) for (const id of [...s.oldIds, s.record?.id]) if (id !== undefined) await runtime.runtime.removeContainer(id).catch(() => {})
        try { await runtime.runtime.removePodSandbox(sandboxId) } catch { /* gone already */ }
      }
      cleanupPodDir(d.rootDir, pod.metadata.uid)
      for (const name of slots.keys()) d.backoff.forget(key(name))
      done = true
    },
    containerLogPath (name, previous) {
      const slot = slots.get(name)
      return previous ? slot?.previousLog : slot?.currentLog
    },
    containerWaiting (name) {
      const slot = slots.get(name)
      if (slot === undefined || slot.currentLog !== undefined) return undefined
      const reason = slot.record?.waitingReason ?? 'ContainerCreating'
      return reason === 'ErrImagePull' || reason === 'ImagePullBackOff' ? 'trying and failing to pull image' : reason
    },
    containerRunning: (name) => slots.get(name)?.record?.state === 'running',
    finished: () => done || terminal !== undefined
  }
}
