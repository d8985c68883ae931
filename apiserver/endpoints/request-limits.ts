// The request limits kube-apiserver applies before serving: in-flight caps for read and mutating requests (429 with
// Retry-After) and the non-long-running request timeout (504). Each is a named wrapper around the next handler.

import type { IncomingMessage, ServerResponse } from 'node:http'
import { StatusError, tooManyRequests } from '../errors/status-error.js'
import type { UserInfo } from '../registry/types.js'

/**
 * What a wrapped step is given: the parsed URL, whether the request is long-running (watch, log stream), and
 * the user once authentication (endpoints/authentication.ts) has run. `auditID` and `audit` are set by the audit
 * wrappers (endpoints/audit.ts): `audit` only when the request is audited, so later steps annotate its event.
 */
export interface RequestTarget { url: URL; longRunning: boolean; user?: UserInfo; auditID?: string; audit?: AuditAnnotations }

/** Adds an annotation to the request's audit event; the first value given for a key is kept. */
export interface AuditAnnotations { annotate(key: string, value: string): void }

export type RequestHandler = (req: IncomingMessage, res: ServerResponse, target: RequestTarget) => Promise<void>

export interface InflightLimits {
  /** `--max-requests-inflight` (non-mutating; 0 = no limit). */
  readonly: number
  /** `--max-mutating-requests-inflight` (0 = no limit). */
  mutating: number
}

export const DEFAULT_INFLIGHT: InflightLimits = { readonly: 400, mutating: 200 }

const MUTATING = new Set(['POST', 'PUT', 'PATCH', 'DELETE'])

/** kube-apiserver's max-in-flight filter: long-running requests are not counted; the excess answers 429. */
/** `inUse` hears each change of the requests in flight per kind (apiserver_current_inflight_requests). */
export function withInflightLimit (limits: InflightLimits, next: RequestHandler,
  inUse?: (kind: 'readOnly' | 'mutating', current: number) => void): RequestHandler {
  let readonly = 0
  let mutating = 0
  const report = (isMutating: boolean): void => { inUse?.(isMutating ? 'mutating' : 'readOnly', isMutating ? mutating : readonly) }
  return async (req, res, target) => {
    if (target.longRunning) return await next(req, res, target)
    const isMutating = MUTATING.has(req.method ?? 'GET')
    const limit = isMutating ? limits.mutating : limits.readonly
    const current = isMutating ? mutating : readonly
    if (limit > 0 && current >= limit) throw tooManyRequests('Too many requests, please try again later.', 1)
    if (isMutating) mutating++
    else readonly++
    report(isMutating)
    let released = false
    const release = (): void => {
      if (released) return
      released = true
      if (isMutating) mutating--
      else readonly--
      report(isMutating)
    }
    // A slot is held until the response is done or the connection goes, whichever comes first.
    res.once('close', release)
    try {
      await next(req, res, target)
    } finally {
      if (res.writableEnded) release()
    }
  }
}

/** Non-long-running requests answer 504 when not done within `timeoutMs` (`--request-timeout`). */
export function withTimeout (timeoutMs: number, onTimeout: (req: IncomingMessage, res: ServerResponse, err: StatusError) => void,
  next: RequestHandler): RequestHandler {
  return async (req, res, target) => {
    if (target.longRunning || timeoutMs <= 0) return await next(req, res, target)
    const timer = setTimeout(() => onTimeout(req, res,
      new StatusError(504, 'Timeout', 'request did not complete within the allotted timeout', { retryAfterSeconds: 1 })), timeoutMs)
    try {
      await next(req, res, target)
    } finally {
      clearTimeout(timer)
    }
  }
}
