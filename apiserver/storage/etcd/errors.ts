// Translates etcd's gRPC failures into the StorageErrors the registry maps (registry/storage-errors.ts).
import { StorageError, isStorageError } from '../store.js'
import { etcdMessage, isFailover } from './etcd-client.js'

export const COMPACTED_TEXT = 'required revision has been compacted'
export const FUTURE_TEXT = 'required revision is a future revision'
const NOSPACE_TEXT = 'database space exceeded'

export function isCompactedError (err: unknown): boolean {
  return etcdMessage(err).includes(COMPACTED_TEXT)
}

export function isFutureError (err: unknown): boolean {
  return etcdMessage(err).includes(FUTURE_TEXT)
}

/**
 * Any failure of an etcd call as a StorageError: no member reachable (or every one timed out) is Unavailable, a full
 * etcd (its NOSPACE alarm) is NoSpace, anything else Internal. Compacted and FutureRevision are raised by the store,
 * which knows the revisions they carry.
 */
export function toStorageError (err: unknown, what: string, key?: string): StorageError {
  if (isStorageError(err)) return err
  const text = etcdMessage(err)
  if (isFailover(err)) return new StorageError('Unavailable', `etcd ${what}: no etcd member answered (${text})`, key)
  if (text.includes(NOSPACE_TEXT)) return new StorageError('NoSpace', `etcd ${what}: ${text}`, key)
  return new StorageError('Internal', `etcd ${what}: ${text}`, key)
}
