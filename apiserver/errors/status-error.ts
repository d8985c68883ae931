// The one API error type: every failure a client sees is a StatusError rendered as a meta/v1 Status.

export type StatusReason =
  | 'BadRequest' | 'Unauthorized' | 'Forbidden' | 'NotFound' | 'AlreadyExists' | 'Conflict'
  | 'Gone' | 'Invalid' | 'ServerTimeout' | 'Timeout' | 'TooManyRequests' | 'MethodNotAllowed'
  | 'NotAcceptable' | 'RequestEntityTooLarge' | 'UnsupportedMediaType' | 'InternalError'
  | 'Expired' | 'ServiceUnavailable' | 'InsufficientStorage'
  /** StatusReasonUnknown: what kube-apiserver answers for an error it did not classify. */
  | ''

/** One entry of `details.causes`: `reason` is a CauseType such as FieldValueRequired. */
export interface StatusCause { reason?: string; message?: string; field?: string }

export interface StatusDetails {
  name?: string
  group?: string
  kind?: string
  uid?: string
  causes?: StatusCause[]
  retryAfterSeconds?: number
}

/** The resource an error is about, as the Status `details` names it. */
export interface QualifiedResource { group: string; resource: string }

export class StatusError extends Error {
  readonly code: number
  readonly reason: StatusReason
  readonly details?: StatusDetails
  /** ListMeta of the Status (a 410 for an expired continue token carries a fresh token here). */
  readonly listMeta?: { continue?: string }

  constructor (code: number, reason: StatusReason, message: string, details?: StatusDetails, listMeta?: { continue?: string }) {
    super(message)
    this.name = 'StatusError'
    this.code = code
    this.reason = reason
    this.details = details
    this.listMeta = listMeta
  }

  /** The meta/v1 Status object for this error. */
  toStatus (): Record<string, unknown> {
    const status: Record<string, unknown> = {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: this.listMeta ?? {},
      status: 'Failure',
      message: this.message,
      reason: this.reason,
      code: this.code
    }
    if (this.details !== undefined) status.details = this.details
    return status
  }
}

export function isStatusError (err: unknown): err is StatusError {
  return err instanceof StatusError
}

function resourceLabel (qr: QualifiedResource): string {
  return qr.group === '' ? qr.resource : `${qr.resource}.${qr.group}`
}

export function notFound (qr: QualifiedResource, name: string): StatusError {
  return new StatusError(404, 'NotFound', `${resourceLabel(qr)} "${name}" not found`,
    { name, group: qr.group, kind: qr.resource })
}

/** A path that names no resource at all (unknown group, version or resource type). */
export function pathNotFound (message = 'the server could not find the requested resource'): StatusError {
  return new StatusError(404, 'NotFound', message, {})
}

export function alreadyExists (qr: QualifiedResource, name: string): StatusError {
  return new StatusError(409, 'AlreadyExists', `${resourceLabel(qr)} "${name}" already exists`,
    { name, group: qr.group, kind: qr.resource })
}

export function conflict (qr: QualifiedResource, name: string, why: string): StatusError {
  return new StatusError(409, 'Conflict',
    `Operation cannot be fulfilled on ${resourceLabel(qr)} "${name}": ${why}`,
    { name, group: qr.group, kind: qr.resource })
}

/**
 * 422 with one cause per field error, worded as Kubernetes' NewInvalid: `Deployment.apps "web" is invalid: ...`
 * (the kind qualified by its group, none for the core group); an empty name is left out of the details.
 */
export function invalid (group: string, kind: string, name: string, all: StatusCause[]): StatusError {
  // The same error found twice (a schema check and a strategy check of one field) is reported once, as
  // Kubernetes' aggregate message does; the causes follow the message.
  const seen = new Set<string>()
  const causes = all.filter(c => { const k = `${c.reason ?? ''}\0${c.field ?? ''}\0${c.message ?? ''}`; if (seen.has(k)) return false; seen.add(k); return true })
  const list = causes.map(c => c.field ? `${c.field}: ${c.message ?? ''}` : (c.message ?? ''))
  const summary = list.length === 1 ? list[0] : `[${list.join(', ')}]`
  const qualified = group === '' ? kind : `${kind}.${group}`
  return new StatusError(422, 'Invalid', `${qualified} "${name}" is invalid: ${summary}`,
    { ...(name !== '' ? { name } : {}), group, kind, causes })
}

/** A server-side apply that changes fields other managers own: 409, one FieldManagerConflict cause per field. */
export function applyConflict (message: string, causes: StatusCause[]): StatusError {
  return new StatusError(409, 'Conflict', message, { causes })
}

export function badRequest (message: string, causes?: StatusCause[]): StatusError {
  return new StatusError(400, 'BadRequest', message, causes ? { causes } : undefined)
}

export function gone (message: string, listMeta?: { continue?: string }): StatusError {
  return new StatusError(410, 'Expired', message, undefined, listMeta)
}

/** 410 for a resourceVersion older than retained history (the reason Kubernetes uses is Expired). */
export function resourceVersionTooOld (message = 'too old resource version'): StatusError {
  return new StatusError(410, 'Expired', message)
}

export function tooLargeResourceVersion (requested: number, current: number, retryAfterSeconds = 1): StatusError {
  return new StatusError(504, 'Timeout',
    `Too large resource version: ${requested}, current: ${current}`,
    { causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }], retryAfterSeconds })
}

export function methodNotAllowed (method: string, what: string): StatusError {
  return new StatusError(405, 'MethodNotAllowed', `${method} is not supported on ${what}`)
}

/** 405 for a method a path has no route for (go-restful's answer, as kube-apiserver words it: `kubectl get tokenreviews`). */
export function methodNotRouted (): StatusError {
  return new StatusError(405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource', {})
}

export function notAcceptable (supported: string[]): StatusError {
  return new StatusError(406, 'NotAcceptable',
    `the server was unable to respond with a content type that the client supports (supported: ${supported.join(', ')})`)
}

export function unsupportedMediaType (contentType: string, supported: string[]): StatusError {
  return new StatusError(415, 'UnsupportedMediaType',
    `the body of the request was in an unknown format - accepted media types include: ${supported.join(', ')}`,
    contentType ? { causes: [{ reason: 'UnsupportedMediaType', message: contentType }] } : undefined)
}

export function requestEntityTooLarge (limitBytes: number): StatusError {
  return new StatusError(413, 'RequestEntityTooLarge', `the request body is too large: limit is ${limitBytes} bytes`)
}

export function forbidden (qr: QualifiedResource, name: string, why: string): StatusError {
  const what = name ? `${resourceLabel(qr)} "${name}"` : resourceLabel(qr)
  return new StatusError(403, 'Forbidden', `${what} is forbidden: ${why}`,
    { name: name || undefined, group: qr.group, kind: qr.resource })
}

export function unauthorized (message = 'Unauthorized'): StatusError {
  return new StatusError(401, 'Unauthorized', message)
}

export function tooManyRequests (message: string, retryAfterSeconds: number): StatusError {
  return new StatusError(429, 'TooManyRequests', message, { retryAfterSeconds })
}

export function serviceUnavailable (message: string): StatusError {
  return new StatusError(503, 'ServiceUnavailable', message)
}

/**
 * 507: the store is full (or at its quota), so the write was refused and nothing was written; reads and deletes still
 * work. Kubernetes answers etcd's "database space exceeded" with a 500; orch names the condition.
 */
export function insufficientStorage (message: string): StatusError {
  return new StatusError(507, 'InsufficientStorage', message)
}

/** kube-apiserver's NewGenericServerResponse(422): the generic message, the underlying error as the cause. */
export function rejectedRequest (why: string): StatusError {
  return new StatusError(422, 'Invalid', 'the server rejected our request due to an error in our request', { causes: [{ message: why }] })
}

/** An error kube-apiserver passes through unclassified: 500, empty reason, the error's own text as the message. */
export function unclassifiedError (message: string): StatusError {
  return new StatusError(500, '', message)
}

export function internalError (err: unknown): StatusError {
  const why = err instanceof Error ? err.message : String(err)
  return new StatusError(500, 'InternalError', `Internal error occurred: ${why}`,
    { causes: [{ message: why }] })
}
