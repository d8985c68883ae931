// One pod's sync loop: adoption, sandbox, init containers in order, containers with restart policy and back-off, probes, stop.

import { join } from 'node:path'
import { rm } from 'node:fs/promises'
import type { ContainerStatus as RuntimeContainerStatus, PodSandboxConfig } from '../runtime/runtime.js'
import { SeccompError } from './seccomp.js'
import { RuntimeError } from '../runtime/runtime.js'
import { containerConfig, ContainerConfigError, LABEL_POD_UID, podLogDir, sandboxConfig } from './container-config.js'
import { buildPodStatus, type ContainerRecord, type PodStatusInput } from './pod-status.js'
import type { Pod, PodStatus } from './pod-types.js'
import { startAttemptProbes } from './container-probes.js'
import { cleanupPodDir, prepareVolumes, refreshVolumes, VolumeError } from './volumes.js'
import { ensureImage, ImagePullError } from './images.js'
import { createPodEvents, goDuration } from './pod-events.js'
import { adoptPod, attemptLogPath, removeSandbox, restartCountFromLogDir } from './adoption.js'
import { applyExit, nsToMs, recordFromStatus, terminatedOf } from './container-records.js'
import { terminationMessage, terminationMessageFile, terminationMessageMount } from './termination-message.js'
import type { PodWorker, PodWorkerDeps, Slot } from './pod-worker-types.js'

export type { PodWorker, PodWorkerDeps } from './pod-worker-types.js'

/** Waiting reasons of a container that failed to be set up; it is retried only after its back-off. */
const RETRY_REASONS = new Set(['ErrImagePull', 'ImagePullBackOff', 'ErrImageNeverPull', 'InvalidImageName', 'CreateContainerConfigError', 'CreateContainerError'])

export function createPodWorker (initial: Pod, d: PodWorkerDeps): PodWorker {
  let pod = initial
  const uid = pod.metadata.uid
  const handler = d.handlerFor?.(pod) ?? pod.spec.runtimeClassName ?? ''
  const runtime = d.runtimeFor(handler)
  // WASI preopens directories only, so the WebAssembly runtime cannot mount a termination-message file.
  const usesMessageFile = runtime.name !== 'wasm'
  const key = (name: string) => `${uid}/${name}`
  // Pod-level back-off (sandbox, volumes, a failed sync): the kubelet requeues a failed sync, not at the next relist.
  const podKey = `${uid}#pod`
  const events = createPodEvents(d.recorder, () => pod)
  const slots = new Map<string, Slot>()
  const initNames = (pod.spec.initContainers ?? []).map(c => c.name)
  for (const c of [...(pod.spec.initContainers ?? []), ...pod.spec.containers]) slots.set(c.name, { spec: c, baseAttempt: 0, oldIds: [] })
  let adopted = false
  let sandboxId: string | undefined
  let sandboxCfg: PodSandboxConfig | undefined
  let sandboxAttempt = 0
  let podIP: string | undefined
  let volumes: Map<string, string> | undefined
  let volumesRefreshAt: number | undefined
  const known = initial.status?.startTime !== undefined ? Date.parse(initial.status.startTime) : NaN
  let startTime: number | undefined = Number.isNaN(known) ? undefined : known
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
        // The pod stays Pending with the reason visible in its status, and is retried after its back-off.
        d.backoff.failed(podKey)
        podMessage = (err as Error).message
        for (const s of slots.values()) if (s.record === undefined) waiting(s, 'ContainerCreating', podMessage)
        publish()
      }
    })
  }

  function publish (): void {
    const records = (names: string[]) => names.map(n => slots.get(n)?.record).filter((r): r is ContainerRecord => r !== undefined)
    const input: PodStatusInput = {
      pod,
      init: records(initNames),
      containers: records(pod.spec.containers.map(c => c.name)),
      sandboxReady: sandboxId !== undefined && !terminating,
      hostIP: d.hostIP,
      podIP,
      startTime,
      terminal,
      previous: lastStatus
    }
    const status = buildPodStatus(input, d.now())
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
    slot.record = { name: slot.spec.name, runtimeName: runtime.name, state: 'waiting', waitingReason: reason, waitingMessage: message, restartCount: prev?.restartCount ?? slot.baseAttempt, imageRef: prev?.imageRef ?? '', lastTerminated, ready: false, started: false, id: prev?.id }
  }

  /**
   * Back-off as the kubelet applies it. A container that failed to be set up (image, config, create)
   * waits until its back-off passes; a failed pull shows ImagePullBackOff meanwhile. The first restart
   * of an exited container is immediate and opens a window (10s, doubling); one that must restart
   * inside the window waits in CrashLoopBackOff. Returns true when the slot must wait.
   */
  function heldBack (slot: Slot): boolean {
    const r = slot.record
    if (r === undefined) return false
    const k = key(slot.spec.name)
    const held = d.backoff.until(k) > d.now()
    if (r.state === 'waiting' && RETRY_REASONS.has(r.waitingReason ?? '')) {
      if (held && r.waitingReason === 'ErrImagePull') {
        const message = `Back-off pulling image "${slot.spec.image}"`
        events.container(slot.spec.name, 'Normal', 'BackOff', message)
        waiting(slot, 'ImagePullBackOff', message)
      }
      return held
    }
    const restarting = r.id !== undefined && (r.state === 'exited' || r.waitingReason === 'CrashLoopBackOff')
    if (!restarting) return false
    if (held) {
      if (r.state === 'exited') {
        const m = pod.metadata
        const podName = `${m.name}_${m.namespace}(${m.uid})`
        waiting(slot, 'CrashLoopBackOff', `back-off ${goDuration(d.backoff.delay(k))} restarting failed container=${slot.spec.name} pod=${podName}`)
        events.container(slot.spec.name, 'Warning', 'BackOff', `Back-off restarting failed container ${slot.spec.name} in pod ${podName}`)
      }
      return true
    }
    d.backoff.failed(k)
    return false
  }

  /** state.terminated.message of an exited attempt: its termination-message file, or its log tail. */
  function messageOf (slot: Slot, st: RuntimeContainerStatus): string | undefined {
    return terminationMessage({ container: slot.spec, exitCode: st.exitCode, reason: st.reason, runtimeMessage: st.message || undefined, messageFile: slot.messageFile, logPath: slot.currentLog })
  }

  /** Takes back what the runtime still runs for this pod (after an orchlet restart), and counts attempts from the log dir. */
  async function adopt (): Promise<void> {
    const a = await adoptPod(runtime.runtime, uid)
    sandboxAttempt = a.nextSandboxAttempt
    const logDir = podLogDir(d.logsRoot, pod)
    if (a.sandbox !== undefined) {
      sandboxId = a.sandbox.id
      sandboxCfg = sandboxConfig(pod, d.logsRoot, a.sandbox.metadata.attempt)
      podIP = await sandboxIP(a.sandbox.id)
      startTime ??= nsToMs(a.sandbox.createdAt)
    }
    for (const [name, slot] of slots) {
      slot.baseAttempt = restartCountFromLogDir(join(logDir, name))
      const got = a.containers.get(name)
      if (got !== undefined) {
        if (got.previous !== undefined) { slot.oldIds.push(got.previous.id); slot.previousLog = attemptLogPath(logDir, name, got.previous.metadata.attempt) }
        const attempt = got.latest.metadata.attempt
        slot.record = recordFromStatus(name, runtime.name, got.latest, got.previous)
        slot.currentLog = attemptLogPath(logDir, name, attempt)
        slot.messageFile = usesMessageFile ? terminationMessageFile(d.rootDir, uid, name, attempt) : undefined
        if (slot.record.state === 'exited') slot.record.message = messageOf(slot, got.latest)
        else startProbes(slot, initNames.includes(name))
        d.logger.info({ pod: pod.metadata.name, container: name, id: got.latest.id }, 'adopted container')
        continue
      }
      // The kubelet's default state of a container not yet created in a pod with init containers.
      if (initNames.length > 0 && !initNames.includes(name)) waiting(slot, 'PodInitializing')
    }
  }

  /** The sandbox's own IP; host-network pods (and runtimes without pod networking) use the host's. */
  async function sandboxIP (id: string): Promise<string | undefined> {
    if (pod.spec.hostNetwork === true) return undefined
    try { return (await runtime.runtime.podSandboxStatus(id)).network?.ip || undefined } catch { return undefined }
  }

  async function refresh (slot: Slot): Promise<void> {
    const r = slot.record
    if (r?.id === undefined || r.state !== 'running') return
    let st: RuntimeContainerStatus
    try { st = await runtime.runtime.containerStatus(r.id) } catch (err) {
      if (err instanceof RuntimeError && err.code === 'NotFound') { stopProbes(slot); r.state = 'exited'; r.exitCode = 137; r.reason = 'ContainerStatusUnknown'; r.finishedAt = d.now(); r.ready = false; return }
      throw err
    }
    if (st.state === 'CONTAINER_EXITED') {
      stopProbes(slot)
      applyExit(r, st)
      r.message = messageOf(slot, st)
    } else if (st.state === 'CONTAINER_RUNNING') {
      r.startedAt = nsToMs(st.startedAt)
    }
  }

  function stopProbes (slot: Slot): void {
    slot.probes?.stop()
    slot.probes = undefined
  }

  function startProbes (slot: Slot, isInit: boolean): void {
    const killGrace = slot.spec.livenessProbe?.terminationGracePeriodSeconds ?? pod.spec.terminationGracePeriodSeconds ?? 30
    // The kubelet probes the pod's IP when the probe names no host.
    slot.probes = startAttemptProbes({ container: slot.spec, isInit, record: slot.record!, current: () => slot.record, host: podIP ?? d.hostIP, runtime: runtime.runtime, events, killGrace, logger: d.logger, podName: pod.metadata.name, changed: trigger,
      probeResult: (kind, ok) => d.onProbeResult?.({ kind, ok, container: slot.spec.name, pod: pod.metadata.name, namespace: pod.metadata.namespace ?? '', podUid: pod.metadata.uid }) })
  }

  /** Records a failed setup step: a Warning `Failed` event, the waiting reason, and the container's back-off. */
  function setupFailed (slot: Slot, reason: string, message: string, eventMessage = message): void {
    events.container(slot.spec.name, 'Warning', 'Failed', `Error: ${eventMessage}`)
    waiting(slot, reason, message)
    d.backoff.failed(key(slot.spec.name))
  }

  async function start (slot: Slot, isInit: boolean): Promise<void> {
    const c = slot.spec
    const prev = slot.record
    const attempt = prev?.id === undefined ? (prev?.restartCount ?? slot.baseAttempt) : prev.restartCount + 1
    let imageRef: string
    try {
      imageRef = await ensureImage(runtime, c, sandboxCfg!, events.forImage(c.name), d.now)
    } catch (err) {
      if (!(err instanceof ImagePullError)) throw err
      return setupFailed(slot, err.reason, err.message, err.reason)
    }
    let config
    try {
      config = await containerConfig({ pod, container: c, attempt, volumes: volumes!, hostIP: d.hostIP, podIP, client: d.client, cpuCfsQuota: d.cpuCfsQuota, cfsPeriodUs: d.cfsPeriodUs })
      Object.assign(config, d.containerExtras?.(pod, c))
    } catch (err) {
      if (!(err instanceof ContainerConfigError || err instanceof VolumeError || err instanceof SeccompError)) throw err
      return setupFailed(slot, 'CreateContainerConfigError', err.message)
    }
    const messageFile = usesMessageFile ? terminationMessageFile(d.rootDir, uid, c.name, attempt) : undefined
    if (messageFile !== undefined) config.mounts.push(terminationMessageMount(messageFile, c))
    let id: string
    try {
      id = await runtime.runtime.createContainer(sandboxId!, config, sandboxCfg!)
    } catch (err) {
      return setupFailed(slot, 'CreateContainerError', (err as Error).message)
    }
    events.container(c.name, 'Normal', 'Created', `Created container ${c.name}`)
    if (prev?.id !== undefined) slot.oldIds.push(prev.id)
    // Keep one dead container per container for `logs --previous`; remove older ones and their logs, as the
    // kubelet's container GC does (the newest two log files stay, so a restarted orchlet still counts on).
    while (slot.oldIds.length > 1) {
      const old = slot.oldIds.shift()!
      runtime.runtime.removeContainer(old).catch(() => {})
      if (slot.previousLog !== undefined) rm(slot.previousLog, { force: true }).catch(() => {})
    }
    slot.previousLog = slot.currentLog
    slot.currentLog = join(sandboxCfg!.logDirectory, config.logPath)
    slot.messageFile = messageFile
    slot.record = { name: c.name, id, runtimeName: runtime.name, state: 'waiting', waitingReason: 'ContainerCreating', restartCount: attempt, imageRef, lastTerminated: prev?.state === 'exited' ? terminatedOf(prev) : prev?.lastTerminated, ready: false, started: false }
    try {
      await runtime.runtime.startContainer(id)
    } catch (err) {
      Object.assign(slot.record, { state: 'exited', exitCode: 128, reason: 'StartError', message: (err as Error).message, finishedAt: d.now() })
      events.container(c.name, 'Warning', 'Failed', `Error: ${(err as Error).message}`)
      d.backoff.failed(key(c.name))
      return
    }
    events.container(c.name, 'Normal', 'Started', `Started container ${c.name}`)
    slot.record.state = 'running'
    slot.record.startedAt = d.now()
    startProbes(slot, isInit)
  }

  function shouldRestart (r: ContainerRecord): boolean {
    const policy = pod.spec.restartPolicy ?? 'Always'
    return policy === 'Always' || (policy === 'OnFailure' && (r.exitCode ?? 0) !== 0)
  }

  /**
   * Removes this pod's sandboxes other than the current one (a failed attempt may keep its name reserved).
   * Best effort: containerd cannot tear down a sandbox whose network never came up while CNI is missing.
   */
  async function removeStaleSandboxes (): Promise<void> {
    for (const s of await runtime.runtime.listPodSandbox({ labelSelector: { [LABEL_POD_UID]: uid } })) {
      if (s.id === sandboxId) continue
      await removeSandbox(runtime.runtime, s.id).catch(err => d.logger.warn({ pod: pod.metadata.name, sandbox: s.id, err: (err as Error).message }, 'removing a failed pod sandbox failed'))
    }
  }

  async function ensureSandbox (): Promise<boolean> {
    if (volumes === undefined) {
      try {
        const prepared = await prepareVolumes(pod, { rootDir: d.rootDir, client: d.client }, d.now())
        volumes = prepared.paths
        volumesRefreshAt = prepared.refreshAtMs
      } catch (err) {
        if (!(err instanceof VolumeError)) throw err
        if (podMessage !== err.message) events.pod('Warning', 'FailedMount', `MountVolume.SetUp failed for volume "${err.volume}" : ${err.message.slice(`volume "${err.volume}": `.length)}`)
        podMessage = err.message
        for (const s of slots.values()) if (s.record === undefined) waiting(s, 'ContainerCreating', err.message)
        return false
      }
      podMessage = undefined
    }
    if (sandboxId !== undefined) return true
    const cfg = { ...sandboxConfig(pod, d.logsRoot, sandboxAttempt), ...d.sandboxExtras?.(pod) }
    try {
      cfg.cgroupParent = d.cgroups?.parentFor(pod, handler)
      sandboxId = await runtime.runtime.runPodSandbox(cfg, handler)
    } catch (err) {
      const message = (err as Error).message
      d.logger.warn({ pod: pod.metadata.name, attempt: sandboxAttempt, err: message }, 'creating pod sandbox failed')
      events.pod('Warning', 'FailedCreatePodSandBox', `Failed to create pod sandbox: ${message}`)
      sandboxAttempt++
      await removeStaleSandboxes()
      return false
    }
    sandboxAttempt++
    sandboxCfg = cfg
    podIP = await sandboxIP(sandboxId)
    startTime ??= d.now()
    return true
  }

  async function syncInit (): Promise<boolean> {
    for (const name of initNames) {
      const slot = slots.get(name)!
      await refresh(slot)
      const r = slot.record
      if (r?.state === 'exited' && r.exitCode === 0) continue
      if (r?.state === 'running') return false
      if (r?.state === 'exited' && (pod.spec.restartPolicy ?? 'Always') === 'Never') {
        terminal = { phase: 'Failed', reason: undefined, message: `init container ${name} failed with exit code ${r.exitCode ?? 0}` }
        return false
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
    if (d.tracing === undefined) return await syncOnce()
    const attributes = { 'k8s.pod': pod.metadata.name, 'k8s.namespace': pod.metadata.namespace ?? '', 'k8s.pod.uid': pod.metadata.uid ?? '' }
    await d.tracing.inSpan('syncPod', attributes, syncOnce)
  }

  async function syncOnce (): Promise<void> {
    if (terminating || terminal !== undefined) { publish(); return }
    const deadline = pod.spec.activeDeadlineSeconds
    if (deadline !== undefined && startTime !== undefined && d.now() - startTime > deadline * 1000) {
      terminal = { phase: 'Failed', reason: 'DeadlineExceeded', message: `Pod was active on the node longer than the specified deadline` }
      events.pod('Normal', 'DeadlineExceeded', terminal.message!)
      await stopAll(pod.spec.terminationGracePeriodSeconds ?? 30)
      publish()
      return
    }
    if (!adopted) { await adopt(); adopted = true }
    if (d.backoff.until(podKey) > d.now()) { publish(); return }
    await refreshTokens()
    if (await ensureSandbox()) {
      d.backoff.forget(podKey)
      if (await syncInit()) await syncContainers()
    } else d.backoff.failed(podKey)
    if (terminal !== undefined) for (const s of slots.values()) stopProbes(s)
    publish()
  }

  /** Service-account tokens in projected volumes are fetched again before they expire; a failure is retried next sync. */
  async function refreshTokens (): Promise<void> {
    if (volumes === undefined || volumesRefreshAt === undefined || d.now() < volumesRefreshAt) return
    try { volumesRefreshAt = await refreshVolumes(pod, { rootDir: d.rootDir, client: d.client }, d.now()) } catch (err) {
      d.logger.warn({ pod: pod.metadata.name, err: (err as Error).message }, 'refreshing projected service account tokens failed')
      volumesRefreshAt = d.now() + 10_000
    }
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
    uid,
    pod: () => pod,
    status: () => lastStatus,
    update (next) { pod = next; trigger() },
    async terminate (grace) {
      terminating = true
      clearInterval(timer)
      await chain
      // A pod deleted while the orchlet was down is adopted first, so its containers get their grace period.
      if (!adopted) { await adopt().catch(err => d.logger.warn({ pod: pod.metadata.name, err: (err as Error).message }, 'adopting a pod to stop it failed')); adopted = true }
      await stopAll(grace)
      for (const s of slots.values()) stopProbes(s)
      publish()
      if (sandboxId !== undefined) {
        try { await runtime.runtime.stopPodSandbox(sandboxId) } catch { /* gone already */ }
        for (const s of slots.values()) for (const id of [...s.oldIds, s.record?.id]) if (id !== undefined) await runtime.runtime.removeContainer(id).catch(() => {})
        try { await runtime.runtime.removePodSandbox(sandboxId) } catch { /* gone already */ }
      }
      await removeStaleSandboxes().catch(() => {})
      cleanupPodDir(d.rootDir, uid)
      d.cgroups?.release(pod)
      for (const name of slots.keys()) d.backoff.forget(key(name))
      d.backoff.forget(podKey)
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
    runtimeIds: (name) => ({ runtime, sandboxId, containerId: name === undefined ? undefined : slots.get(name)?.record?.id }),
    finished: () => done || terminal !== undefined,
    detach () {
      done = true
      clearInterval(timer)
      for (const s of slots.values()) stopProbes(s)
    }
  }
}
