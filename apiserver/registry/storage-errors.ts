// THE seam translating StorageError into StatusError (as Kubernetes' InterpretGetError & co.).

import {
  StatusError, alreadyExists, conflict, gone, insufficientStorage, internalError, isStatusError, notFound,
  resourceVersionTooOld, serviceUnavailable, tooLargeResourceVersion, type QualifiedResource
} from '../errors/status-error.js'
import { isStorageError } from '../storage/store.js'

export const CONFLICT_MESSAGE = 'the object has been modified; please apply your changes to the latest version and try again'
export const LIST_TOO_OLD_MESSAGE = 'The resourceVersion for the provided list is too old.'
export const CONTINUE_EXPIRED_MESSAGE = 'The provided continue parameter is too old to display a consistent list result. ' +
  'You can start a new list without the continue parameter, or use the continue token in this response to retrieve ' +
  'the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that ' +
  'were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.'

/** What the failing call was doing: picks the wording of Compacted errors. */
export type StorageOp = 'get' | 'list' | 'continue' | 'watch' | 'write'

export interface ErrorContext {
  resource: QualifiedResource
  name?: string
  op: StorageOp
  /** The revision the client asked for (Compacted / FutureRevision messages). */
  requested?: number
}

/** Any error out of the storage layer (or already a StatusError) as the StatusError the client sees. */
export function toStatusError (err: unknown, c: ErrorContext): StatusError {
  if (isStatusError(err)) return err
  if (!isStorageError(err)) return internalError(err)
  const name = c.name ?? ''
  switch (err.code) {
    case 'NotFound': return notFound(c.resource, name)
    case 'KeyExists': return alreadyExists(c.resource, name)
    case 'Conflict': return conflict(c.resource, name, CONFLICT_MESSAGE)
    case 'Compacted':
      if (c.op === 'watch') return resourceVersionTooOld(`too old resource version: ${c.requested ?? 0} (${err.revision ?? 0})`)
      if (c.op === 'continue') return gone(CONTINUE_EXPIRED_MESSAGE)
      return gone(LIST_TOO_OLD_MESSAGE)
    case 'FutureRevision': return tooLargeResourceVersion(c.requested ?? 0, err.revision ?? 0)
    case 'StoreClosed': return serviceUnavailable('the storage is shutting down')
    case 'NoSpace': return insufficientStorage(err.message)
    case 'Unavailable': return serviceUnavailable(err.message)
    default: return internalError(err)
  }
}
