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

/**
 * The call's promise, observed when it settles. Plain promise handlers rather than async wrappers: every create makes
 * several storage calls, and each async layer costs a promise and a microtask more.
 */
function timed<T> (observe: StorageObserver, operation: string, key: string, call: () => Promise<T>): Promise<T> {
  const start = process.hrtime.bigint()
  let pending: Promise<T>
  try {
    pending = Promise.resolve(call())
  } catch (err) {
    pending = Promise.reject(err)
  }
  const done = (): void => observe(operation, resourceOfKey(key), Number(process.hrtime.bigint() - start) / 1e9)
  return pending.then(value => { done(); return value }, (err: unknown) => { done(); throw err })
}

/** The same store, each read and write measured; watches and bookkeeping pass through untimed. */
export function instrumentStore (store: Store, observe: StorageObserver): Store {
  return {
    currentRevision: () => store.currentRevision(),
    compactedRevision: () => store.compactedRevision(),
    get: (key, opts) => timed(observe, 'get', key, () => store.get(key, opts)),
    list: (prefix, opts) => timed(observe, 'list', prefix, () => store.list(prefix, opts)),
    ...(store.listJoined !== undefined
      ? { listJoined: (prefix, opts, separator) => timed(observe, 'list', prefix, () => store.listJoined!(prefix, opts, separator)) }
      : {}),
    count: prefix => timed(observe, 'count', prefix, () => store.count(prefix)),
    create: (key, encode) => timed(observe, 'create', key, () => store.create(key, encode)),
    update: (key, encode, rev) => timed(observe, 'update', key, () => store.update(key, encode, rev)),
    delete: (key, rev) => timed(observe, 'delete', key, () => store.delete(key, rev)),
    watch: (prefix, from, callbacks) => store.watch(prefix, from, callbacks),
    compact: revision => timed(observe, 'compact', '', () => store.compact(revision)),
    close: async () => await store.close(),
    space: () => store.space(),
    onSpaceChange: listener => store.onSpaceChange(listener)
  }
}
