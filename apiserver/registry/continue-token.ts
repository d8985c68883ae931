// Continue tokens of paged lists: base64 JSON {v, rv, start, t}; the list revision and the next key.

import { badRequest, gone } from '../errors/status-error.js'
import { CONTINUE_EXPIRED_MESSAGE } from './storage-errors.js'

export interface ContinuePosition {
  /**
   * Revision of the first chunk; every chunk is read at it. -1 marks an inconsistent continuation
   * (handed out with a 410 when the original revision is gone): read at the newest revision.
   */
  rv: number
  /** Next key, relative to the resource prefix. */
  start: string
  /** When the first chunk was served (ms): tokens expire `ttlMs` after it. */
  issuedAt: number
  /**
   * Keys from `start` to the end at `rv` (the previous chunk's remainingItemCount), so the next chunk need not count
   * them again; absent in older tokens and inconsistent continuations.
   */
  remaining?: number
}

export const CONTINUE_TTL_MS = 5 * 60 * 1000

export function encodeContinue (p: ContinuePosition): string {
  return Buffer.from(JSON.stringify({ v: 'meta.orch.io/v1', rv: p.rv, start: p.start, t: p.issuedAt, n: p.remaining })).toString('base64url')
}

/** Decodes and checks a token: 400 when malformed, 410 when older than the lifetime. */
export function decodeContinue (token: string, now: number, ttlMs = CONTINUE_TTL_MS): ContinuePosition {
  let parsed: { v?: unknown, rv?: unknown, start?: unknown, t?: unknown, n?: unknown }
  try {
    parsed = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'))
  } catch {
    throw badRequest('continue key is not valid: illegal base64 data or JSON')
  }
  if (parsed === null || typeof parsed !== 'object' || parsed.v !== 'meta.orch.io/v1') {
    throw badRequest('continue key is not valid: incorrect encoded start resourceVersion (version meta.orch.io/v1)')
  }
  const { rv, start, t, n } = parsed
  if (typeof rv !== 'number' || !Number.isSafeInteger(rv) || (rv <= 0 && rv !== -1)) throw badRequest('continue key is not valid: incorrect encoded start resourceVersion (version meta.orch.io/v1)')
  if (typeof start !== 'string' || start.includes('/..') || start.startsWith('/')) throw badRequest('continue key is not valid: encoded start key is invalid')
  const issuedAt = typeof t === 'number' ? t : now
  if (now - issuedAt > ttlMs) throw continueExpired(start, now)
  const remaining = typeof n === 'number' && Number.isSafeInteger(n) && n > 0 && rv !== -1 ? n : undefined
  return { rv, start, issuedAt, remaining }
}

/**
 * The 410 for a continue token whose snapshot is gone: as kube-apiserver, it carries a token that
 * continues from the same key at the newest revision (an inconsistent but complete continuation).
 */
export function continueExpired (start: string, now: number): ReturnType<typeof gone> {
  return gone(CONTINUE_EXPIRED_MESSAGE, { continue: encodeContinue({ rv: -1, start, issuedAt: now }) })
}
