// Dead-container GC as the kubelet keeps them: per pod and container name the newest exited instances
// (--maximum-dead-containers-per-container), past --minimum-container-ttl-duration, a node-wide cap
// (--maximum-dead-containers); every dead container of a pod the node no longer runs goes.

import type { Container, ContainerRuntime } from '../runtime/runtime.js'
import { LABEL_CONTAINER_NAME, LABEL_POD_UID } from '../pods/container-config.js'

export interface ContainerGcPolicy {
  minAgeMs: number
  /** Kept per pod and container name; negative: no cap. */
  maxPerPodContainer: number
  /** Kept on the node; negative: no cap. */
  maxContainers: number
}

export interface ContainerGcDeps {
  runtimes(): ContainerRuntime[]
  policy: ContainerGcPolicy
  /** Pods the node still runs (their newest dead containers are kept for status and logs). */
  isActivePod(uid: string): boolean
  now(): number
  logger: { info(o: object, m?: string): void, warn(o: object, m?: string): void }
}

export interface ContainerGc {
  /** One round; `allUnused` (node-level reclaim) also removes what the per-container cap would keep of gone pods. Resolves with the count removed. */
  garbageCollect(allUnused?: boolean): Promise<number>
}

export function createContainerGc (d: ContainerGcDeps): ContainerGc {
  async function remove (rt: ContainerRuntime, c: Container): Promise<boolean> {
    try { await rt.runtime.removeContainer(c.id); return true } catch (err) {
      d.logger.warn({ container: c.id, err: (err as Error).message }, 'container garbage collection: removing a container failed')
      return false
    }
  }

  return {
    async garbageCollect (allUnused = false) {
      let removed = 0
      const survivors: Array<{ rt: ContainerRuntime, c: Container }> = []
      for (const rt of d.runtimes()) {
        const dead = (await rt.runtime.listContainers({ state: 'CONTAINER_EXITED' })).filter(c => d.now() - c.createdAt / 1e6 >= d.policy.minAgeMs)
        const groups = new Map<string, Container[]>()
        for (const c of dead) {
          const key = `${c.labels[LABEL_POD_UID] ?? ''}/${c.labels[LABEL_CONTAINER_NAME] ?? c.metadata.name}`
          groups.set(key, [...(groups.get(key) ?? []), c])
        }
        for (const [key, list] of groups) {
          const uid = key.slice(0, key.indexOf('/'))
          list.sort((a, b) => b.createdAt - a.createdAt)
          const active = d.isActivePod(uid)
          const keep = !active ? 0 : d.policy.maxPerPodContainer < 0 || allUnused ? (allUnused ? 1 : list.length) : d.policy.maxPerPodContainer
          for (const [i, c] of list.entries()) {
            if (i >= keep) { if (await remove(rt, c)) removed++ } else survivors.push({ rt, c })
          }
        }
      }
      // The node-wide cap removes the oldest of what is left.
      if (d.policy.maxContainers >= 0 && survivors.length > d.policy.maxContainers) {
        survivors.sort((a, b) => a.c.createdAt - b.c.createdAt)
        for (const s of survivors.slice(0, survivors.length - d.policy.maxContainers)) if (await remove(s.rt, s.c)) removed++
      }
      if (removed > 0) d.logger.info({ removed }, 'container garbage collection removed dead containers')
      return removed
    }
  }
}
