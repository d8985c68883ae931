// Content digests: sha256 of bytes, their `sha256:<hex>` form, and verification against an expected digest.
import { createHash } from 'node:crypto'
import { OciError } from './errors.js'

const DIGEST_RE = /^sha256:[a-f0-9]{64}$/

export function sha256Digest (bytes: Uint8Array): string {
  return 'sha256:' + createHash('sha256').update(bytes).digest('hex')
}

export function isDigest (s: string): boolean {
  return DIGEST_RE.test(s)
}

/** Only sha256 is accepted: a digest naming another algorithm cannot be verified here. */
export function assertDigest (s: string): string {
  if (!DIGEST_RE.test(s)) throw new OciError('OCI_ERR_UNSUPPORTED', `unsupported or malformed digest ${JSON.stringify(s)} (want sha256:<64 hex>)`)
  return s
}

/** Throws OCI_ERR_DIGEST_MISMATCH unless `bytes` hash to `expected`. */
export function verifyDigest (bytes: Uint8Array, expected: string, what = 'blob'): void {
  assertDigest(expected)
  const actual = sha256Digest(bytes)
  if (actual !== expected) throw new OciError('OCI_ERR_DIGEST_MISMATCH', `${what} digest mismatch: expected ${expected}, got ${actual}`)
}
