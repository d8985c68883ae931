// The contract of a pod's sync loop (pod-worker.ts): what it is given, what it offers, and the state it keeps per container.

import type { ApiClient } from '../../apiserver/client/rest-client.js'
import type { ContainerConfig, ContainerRuntime, PodSandboxConfig } from '../runtime/runtime.js'
import type { Backoff } from './backoff.js'
import type { ContainerRecord } from './pod-status.js'
import type { Container, Pod, PodStatus } from './pod-types.js'
import type { AttemptProbes } from './container-probes.js'
import type { EventRecorder } from '../events/recorder.js'
import type { SpanRunner } from '../runtime/traced-runtime.js'

export interface PodWorkerDeps {
  runtimeFor(handler: string): ContainerRuntime
  /** The runtime handler of a pod (its RuntimeClass, or WebAssembly for wasm images); default: runtimeClassName. */
  handlerFor?(pod: Pod): string
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
  /** OrchletTracing: each sync a `syncPod` span, the CRI calls it makes its children; none by default. */
  tracing?: SpanRunner
  /** Each probe attempt's outcome (the kubelet's prober_probe_total); none without. */
  onProbeResult?: (r: { kind: 'startup' | 'liveness' | 'readiness', ok: boolean, container: string, pod: string, namespace: string, podUid: string }) => void
  /** The pod cgroups (agent/cgroups/): the sandbox's cgroup parent, and the cgroup released once the pod stopped. */
  cgroups?: { parentFor(pod: Pod, handler: string): string | undefined, release(pod: Pod): void }
  /** Node-level sandbox settings of a pod (DNS, sysctls); merged into its sandbox config. */
  sandboxExtras?(pod: Pod): Partial<PodSandboxConfig>
  /** Node-level container settings (seccomp); merged into each container's config. A throw is a config error. */
  containerExtras?(pod: Pod, container: Container): Partial<ContainerConfig>
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
  /** The runtime of this pod with its sandbox ID and a container's current ID (exec, attach, port-forward). */
  runtimeIds(container?: string): { runtime: ContainerRuntime; sandboxId?: string; containerId?: string }
  /** True once the pod reached Succeeded/Failed or was terminated. */
  finished(): boolean
  /** Stops syncing and probing without touching the runtime: the pod keeps running for the next orchlet to adopt. */
  detach(): void
}

export interface Slot {
  spec: Container
  record?: ContainerRecord
  /** The attempt a first start uses: one past the highest attempt in the container's log dir. */
  baseAttempt: number
  previousLog?: string
  currentLog?: string
  /** The current attempt's termination-message file (CRI runtimes only). */
  messageFile?: string
  probes?: AttemptProbes
  oldIds: string[]
}
