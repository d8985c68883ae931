// Writes pod status to the API server (for static pods, to their mirror pods), latest-wins, one writer per pod.

import type { ApiClient, JsonObject } from '../../apiserver/client/rest-client.js'
import { isConflict, isNotFound, isAlreadyExists } from '../../apiserver/client/rest-client.js'
import { ANNOTATION_CONFIG_HASH, ANNOTATION_CONFIG_MIRROR, isStaticPod, type Pod, type PodStatus } from './pod-types.js'

export interface StatusManager {
  set(pod: Pod, status: PodStatus): void
  /** After a pod was stopped: for API pods, the final delete (grace 0, uid precondition); for static pods, removes the mirror. */
  podRemoved(pod: Pod): Promise<void>
  /** Deletes a mirror pod that no static pod stands behind any more (uid precondition). */
  deleteOrphanedMirror(mirror: Pod): Promise<void>
  /** Resolves when every queued write finished (used at shutdown and by tests). */
  flush(): Promise<void>
}

export interface StatusManagerDeps {
  client: ApiClient
  /** Mirror pods are owned by this Node (ownerReferences, as the kubelet's mirror client sets them). */
  nodeName: string
  logger: { warn(o: object, m?: string): void; info?(o: object, m?: string): void }
}

function podPath (pod: Pod): string { return `/api/v1/namespaces/${pod.metadata.namespace}/pods/${pod.metadata.name}` }

function configHash (pod: Pod): string { return pod.metadata.annotations?.[ANNOTATION_CONFIG_HASH] ?? pod.metadata.uid }

/**
 * The kubelet's check of an existing mirror pod: it must not be deleting and must carry the
 * static pod's hash; otherwise it is deleted and made again.
 */
export function mirrorIsCurrent (pod: Pod, mirror: { metadata: { deletionTimestamp?: unknown; annotations?: Record<string, string> } }): boolean {
  return mirror.metadata.deletionTimestamp == null && mirror.metadata.annotations?.[ANNOTATION_CONFIG_MIRROR] === configHash(pod)
}

/** The mirror pod of a static pod: the same spec, marked with the hash and owned by the Node. */
export function mirrorOf (pod: Pod, nodeName: string, nodeUID: string): JsonObject {
  const meta = pod.metadata
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: meta.name,
      namespace: meta.namespace,
      labels: meta.labels,
      annotations: { ...meta.annotations, [ANNOTATION_CONFIG_MIRROR]: configHash(pod) },
      ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: nodeName, uid: nodeUID, controller: true }]
    },
    spec: pod.spec as unknown as JsonObject
  }
}

export function createStatusManager (d: StatusManagerDeps): StatusManager {
  const latest = new Map<string, { pod: Pod; status: PodStatus }>()
  const running = new Map<string, Promise<void>>()

  /** The Node's uid for the owner reference; undefined (no mirror made) while the Node is missing or being deleted. */
  async function nodeUID (): Promise<string | undefined> {
    try {
      const node = await d.client.get(`/api/v1/nodes/${d.nodeName}`)
      const meta = node.metadata as JsonObject
      if (meta.deletionTimestamp !== undefined && meta.deletionTimestamp !== null) return undefined
      return typeof meta.uid === 'string' && meta.uid !== '' ? meta.uid : undefined
    } catch (err) {
      if (isNotFound(err)) return undefined
      throw err
    }
  }

  async function ensureMirror (pod: Pod): Promise<JsonObject | undefined> {
    try {
      const existing = await d.client.get(podPath(pod))
      if (mirrorIsCurrent(pod, existing as unknown as Pod)) return existing
      // A mirror being deleted (kubectl delete) or of an older manifest is removed at once and made again.
      const uid = String((existing.metadata as JsonObject).uid)
      try {
        await d.client.delete(podPath(pod), { body: { apiVersion: 'v1', kind: 'DeleteOptions', gracePeriodSeconds: 0, preconditions: { uid } } })
        d.logger.info?.({ pod: pod.metadata.name, uid }, 'deleted stale mirror pod')
      } catch (err) {
        if (!isNotFound(err) && !isConflict(err)) throw err
      }
    } catch (err) {
      if (!isNotFound(err)) throw err
    }
    const owner = await nodeUID()
    if (owner === undefined) return undefined
    try {
      return await d.client.create(`/api/v1/namespaces/${pod.metadata.namespace}/pods`, mirrorOf(pod, d.nodeName, owner))
    } catch (err) {
      if (isAlreadyExists(err)) return await d.client.get(podPath(pod))
      throw err
    }
  }

  async function write (uid: string): Promise<void> {
    for (let attempt = 0; attempt < 5; attempt++) {
      const entry = latest.get(uid)
      if (entry === undefined) return
      try {
        const current = isStaticPod(entry.pod) ? await ensureMirror(entry.pod) : await d.client.get(podPath(entry.pod))
        // No Node yet (or it is being deleted): the kubelet makes no mirror then; a later status retries.
        if (current === undefined) { if (latest.get(uid) === entry) latest.delete(uid); return }
        const currentUid = String((current.metadata as JsonObject).uid)
        if (!isStaticPod(entry.pod) && currentUid !== uid) return
        if (latest.get(uid) !== entry) continue
        await d.client.update(`${podPath(entry.pod)}/status`, { ...current, status: entry.status })
        if (latest.get(uid) === entry) latest.delete(uid)
        return
      } catch (err) {
        if (isNotFound(err) && !isStaticPod(entry.pod)) { latest.delete(uid); return }
        if (!isConflict(err)) {
          d.logger.warn({ pod: entry.pod.metadata.name, err: (err as Error).message }, 'pod status update failed')
          await new Promise(resolve => setTimeout(resolve, 500 * (attempt + 1)))
        }
      }
    }
  }

  function schedule (uid: string): void {
    if (running.has(uid)) return
    const p = (async () => {
      while (latest.has(uid)) {
        const before = latest.get(uid)
        await write(uid)
        if (latest.get(uid) === before) break
      }
    })().finally(() => running.delete(uid))
    running.set(uid, p)
  }

  return {
    set (pod, status) {
      latest.set(pod.metadata.uid, { pod, status })
      schedule(pod.metadata.uid)
    },
    async podRemoved (pod) {
      await running.get(pod.metadata.uid)
      latest.delete(pod.metadata.uid)
      try {
        let uid = pod.metadata.uid
        if (isStaticPod(pod)) {
          // Only this static pod's own mirror goes: a newer version of the manifest may own the name already.
          const mirror = await d.client.get(podPath(pod))
          const meta = mirror.metadata as { uid?: string; annotations?: Record<string, string> }
          if (meta.annotations?.[ANNOTATION_CONFIG_MIRROR] !== (pod.metadata.annotations?.[ANNOTATION_CONFIG_HASH] ?? pod.metadata.uid)) return
          uid = String(meta.uid)
        }
        await d.client.delete(podPath(pod), { body: { apiVersion: 'v1', kind: 'DeleteOptions', gracePeriodSeconds: 0, preconditions: { uid } } })
      } catch (err) {
        if (!isNotFound(err) && !isConflict(err)) d.logger.warn({ pod: pod.metadata.name, err: (err as Error).message }, 'final pod delete failed')
      }
    },
    async deleteOrphanedMirror (mirror) {
      try {
        await d.client.delete(podPath(mirror), { body: { apiVersion: 'v1', kind: 'DeleteOptions', gracePeriodSeconds: 0, preconditions: { uid: mirror.metadata.uid } } })
      } catch (err) {
        if (!isNotFound(err) && !isConflict(err)) d.logger.warn({ pod: mirror.metadata.name, err: (err as Error).message }, 'deleting an orphaned mirror pod failed')
      }
    },
    async flush () {
      while (running.size > 0) await Promise.all([...running.values()])
    }
  }
}
