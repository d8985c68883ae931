// A Store wrapper timing every storage call for the etcd_request_duration_seconds histogram (operation, type).

import type { Store } from './store.js'

/** Receives one storage call's latency; `type` is the resource of its key (`pods`, `deployments.apps`). */
export type StorageObserver = (operation: string, type: string, seconds: number) => void

/** `/core/pods/ns/name` → `pods`, `/apps/deployments/ns/name` → `deployments.apps`, as apiserver_storage_objects names resources. */
export function resourceOfKey (key: string): string {
  // Index arithmetic rather than a regex and a split of the whole key: every storage call names its resource.
  let start = 0
  while (key.charCodeAt(start) === 0x2f) start++
  const slash = key.indexOf('/', start)
  if (slash < 0) return key.slice(start)
  const group = key.slice(start, slash)
  const next = key.indexOf('/', slash + 1)
  const plural = next < 0 ? key.slice(slash + 1) : key.slice(slash + 1, next)
  if (plural === '') return group
  return group === 'core' ? plural : `${plural}.${group}`
}

async function timed<T> (observe: StorageObserver, operation: string, key: string, call: () => Promise<T>): Promise<T> {
  const start = process.hrtime.bigint()
  try {
    return await call()
  } finally {
    observe(operation, resourceOfKey(key), Number(process.hrtime.bigint() - start) / 1e9)
  }
}

/** The same store, each read and write measured; watches and bookkeeping pass through untimed. */
export function instrumentStore (store: Store, observe: StorageObserver): Store {
  return {
    currentRevision: () => store.currentRevision(),
    compactedRevision: () => store.compactedRevision(),
    get: async (key, opts) => await timed(observe, 'get', key, async () => await store.get(key, opts)),
    list: async (prefix, opts) => await timed(observe, 'list', prefix, async () => await store.list(prefix, opts)),
    ...(store.listJoined !== undefined
      ? { listJoined: async (prefix, opts, separator) => await timed(observe, 'list', prefix, async () => await store.listJoined!(prefix, opts, separator)) }
      : {}),
    count: async prefix => await timed(observe, 'count', prefix, async () => await store.count(prefix)),
    create: async (key, encode) => await timed(observe, 'create', key, async () => await store.create(key, encode)),
    update: async (key, encode, rev) => await timed(observe, 'update', key, async () => await store.update(key, encode, rev)),
    delete: async (key, rev) => await timed(observe, 'delete', key, async () => await store.delete(key, rev)),
    watch: (prefix, from, callbacks) => store.watch(prefix, from, callbacks),
    compact: async revision => await timed(observe, 'compact', '', async () => await store.compact(revision)),
    close: async () => await store.close(),
    space: () => store.space(),
    onSpaceChange: listener => store.onSpaceChange(listener)
  }
}
