// What a pod already has in the runtime (after an orchlet restart): its sandbox, its containers' latest attempts, its log dir's attempt count, and orphan removal.

import { readdirSync } from 'node:fs'
import { join } from 'node:path'
import type { ContainerStatus, PodSandbox, RuntimeService } from '../runtime/runtime.js'
import { RuntimeError } from '../runtime/runtime.js'
import { LABEL_CONTAINER_NAME, LABEL_POD_UID } from './container-config.js'

/** One container's latest attempt (running or exited) in the adopted sandbox, and the attempt before it. */
export interface AdoptedContainer {
  latest: ContainerStatus
  previous?: ContainerStatus
}

export interface Adoption {
  /** The READY sandbox to keep, if any. */
  sandbox?: PodSandbox
  /** The attempt a new sandbox must use (max existing + 1, 0 when there was none). */
  nextSandboxAttempt: number
  containers: Map<string, AdoptedContainer>
}

const ignoreNotFound = (err: unknown): void => {
  if (!(err instanceof RuntimeError && err.code === 'NotFound')) throw err
}

/** Stops and removes one sandbox and every container in it. */
export async function removeSandbox (runtime: RuntimeService, id: string): Promise<void> {
  await runtime.stopPodSandbox(id).catch(ignoreNotFound)
  for (const c of await runtime.listContainers({ podSandboxId: id })) await runtime.removeContainer(c.id).catch(ignoreNotFound)
  await runtime.removePodSandbox(id).catch(ignoreNotFound)
}

/**
 * Lists the pod's sandboxes and containers by the pod-uid label. Keeps the newest READY sandbox
 * and removes every other one (as the kubelet's computePodActions kills stale sandboxes); a removal
 * that fails is left for the next try (containerd cannot tear down a sandbox whose network never came up
 * while CNI is missing), since the new sandbox uses a fresh attempt and so a fresh name anyway.
 */
export async function adoptPod (runtime: RuntimeService, uid: string): Promise<Adoption> {
  const sandboxes = await runtime.listPodSandbox({ labelSelector: { [LABEL_POD_UID]: uid } })
  const nextSandboxAttempt = sandboxes.length === 0 ? 0 : Math.max(...sandboxes.map(s => s.metadata.attempt)) + 1
  const ready = sandboxes.filter(s => s.state === 'SANDBOX_READY').sort((a, b) => b.createdAt - a.createdAt)[0]
  for (const s of sandboxes) if (s !== ready) await removeSandbox(runtime, s.id).catch(() => {})
  const containers = new Map<string, AdoptedContainer>()
  if (ready === undefined) return { nextSandboxAttempt, containers }
  const listed = await runtime.listContainers({ podSandboxId: ready.id })
  const byName = new Map<string, ContainerStatus[]>()
  for (const c of listed) {
    const name = c.labels[LABEL_CONTAINER_NAME] ?? c.metadata.name
    let st: ContainerStatus
    try { st = await runtime.containerStatus(c.id) } catch (err) { ignoreNotFound(err); continue }
    byName.set(name, [...(byName.get(name) ?? []), st])
  }
  for (const [name, list] of byName) {
    list.sort((a, b) => b.metadata.attempt - a.metadata.attempt)
    // One dead attempt stays for `logs --previous`; a latest attempt never started is started over.
    const started = list[0]!.state === 'CONTAINER_RUNNING' || list[0]!.state === 'CONTAINER_EXITED'
    for (const st of started ? list.slice(2) : list) await runtime.removeContainer(st.id).catch(ignoreNotFound)
    if (started) containers.set(name, { latest: list[0]!, previous: list[1] })
  }
  return { sandbox: ready, nextSandboxAttempt, containers }
}

/**
 * The kubelet's calcRestartCountByLogDir: one more than the highest `<attempt>.log` in the
 * container's log dir, so a container recreated after a restart does not overwrite old logs.
 */
export function restartCountFromLogDir (containerLogDir: string): number {
  let names: string[]
  try { names = readdirSync(containerLogDir) } catch { return 0 }
  let max = -1
  for (const n of names) {
    const m = /^(\d+)\.log$/.exec(n)
    if (m) max = Math.max(max, Number(m[1]))
  }
  return max + 1
}

/** The log file of one attempt, as container-config lays it out. */
export function attemptLogPath (podLogDirectory: string, container: string, attempt: number): string {
  return join(podLogDirectory, container, `${attempt}.log`)
}

/**
 * Stops and removes the sandboxes (and their containers) of pods no source wants any more.
 * Called once every source has reported, so pods still wanted are never touched.
 * Resolves with the uids removed; a sandbox that cannot be removed is reported to `onError` and skipped.
 */
export async function removeOrphanedPods (runtime: RuntimeService, desiredUids: Set<string>, onError?: (uid: string, err: Error) => void): Promise<string[]> {
  const removed = new Set<string>()
  for (const s of await runtime.listPodSandbox()) {
    const uid = s.labels[LABEL_POD_UID]
    if (uid === undefined || desiredUids.has(uid)) continue
    try {
      await removeSandbox(runtime, s.id)
      removed.add(uid)
    } catch (err) {
      onError?.(uid, err as Error)
    }
  }
  return [...removed]
}
