// Asking the API server for a certificate: create a CertificateSigningRequest, then wait (watch, with a poll as fallback) until it is issued, denied or failed.

import { setTimeout as sleepFor } from 'node:timers/promises'
import { isNotFound, type ApiClient, type JsonObject } from '../../../apiserver/client/rest-client.js'

export const CSR_PATH = '/apis/certificates.orch.io/v1/certificatesigningrequests'
export const CSR_API_VERSION = 'certificates.orch.io/v1'

/** The signer of orchlet client certificates (kubernetes.io/kube-apiserver-client-kubelet's counterpart). */
export const CLIENT_SIGNER = 'orch.io/orch-apiserver-client-orchlet'
/** The signer of orchlet serving certificates (kubernetes.io/kubelet-serving's counterpart). */
export const SERVING_SIGNER = 'orch.io/orchlet-serving'

export interface CertificateRequest {
  csrPem: string
  signerName: string
  usages: string[]
  /** `node-csr-` for the bootstrap request, `csr-` (the default) for renewals, as client-go names them. */
  generateName?: string
  /** spec.expirationSeconds: a shorter lifetime than the signer's default (at least 600). */
  expirationSeconds?: number
}

export interface RequestedCsr { name: string; uid: string }

/** Denied or Failed: the condition's reason and message, worded as client-go's WaitForCertificate reports them. */
export class CsrRejectedError extends Error {
  readonly condition: 'Denied' | 'Failed'
  readonly reason: string
  constructor (condition: 'Denied' | 'Failed', reason: string, message: string) {
    super(condition === 'Denied'
      ? `certificate signing request is denied, reason: ${reason}, message: ${message}`
      : `certificate signing request failed, reason: ${reason}, message: ${message}`)
    this.name = 'CsrRejectedError'
    this.condition = condition
    this.reason = reason
  }
}

/** The wait ran out of time, the request vanished or was replaced. */
export class CsrWaitError extends Error {
  constructor (message: string) {
    super(message)
    this.name = 'CsrWaitError'
  }
}

export async function requestCertificate (client: ApiClient, r: CertificateRequest): Promise<RequestedCsr> {
  const spec: JsonObject = { request: Buffer.from(r.csrPem).toString('base64'), signerName: r.signerName, usages: r.usages }
  if (r.expirationSeconds !== undefined) spec.expirationSeconds = r.expirationSeconds
  const created = await client.create(CSR_PATH, {
    apiVersion: CSR_API_VERSION,
    kind: 'CertificateSigningRequest',
    metadata: { generateName: r.generateName ?? 'csr-' },
    spec
  })
  const meta = (created.metadata ?? {}) as { name?: string; uid?: string }
  return { name: meta.name ?? '', uid: meta.uid ?? '' }
}

interface Condition { type?: string; reason?: string; message?: string }

/** The issued certificate (PEM), undefined while pending; throws on Denied, Failed or a different uid. */
export function issuedCertificate (csr: JsonObject, req: RequestedCsr, log?: (msg: string) => void): string | undefined {
  const uid = (csr.metadata as { uid?: string } | undefined)?.uid
  if (uid !== req.uid) throw new CsrWaitError(`csr "${req.name}" changed UIDs`)
  const status = (csr.status ?? {}) as { conditions?: Condition[]; certificate?: string }
  for (const c of status.conditions ?? []) {
    if (c.type === 'Denied' || c.type === 'Failed') throw new CsrRejectedError(c.type, c.reason ?? '', c.message ?? '')
    if (c.type === 'Approved') {
      if (typeof status.certificate === 'string' && status.certificate !== '') return Buffer.from(status.certificate, 'base64').toString('utf8')
      log?.(`certificate signing request ${req.name} is approved, waiting to be issued`)
    }
  }
  return undefined
}

export interface WaitOptions {
  /** Give up after this long (the kubelet: an hour when bootstrapping, 15 minutes when renewing). */
  timeoutMs: number
  /** Longest watch before the object is read again, and the pause after a failed read or watch. */
  pollMs?: number
  signal?: AbortSignal
  logger?: { info(o: object, m?: string): void; warn(o: object, m?: string): void }
  now?: () => number
}

type Outcome = { cert: string } | { err: Error } | undefined

/** Watches the one request until `onObject` settles it; resolves undefined when the watch ends first. */
async function watchOnce (client: ApiClient, req: RequestedCsr, rv: string, seconds: number, onObject: (o: JsonObject) => Outcome,
  signal?: AbortSignal): Promise<Outcome> {
  const stop = new AbortController()
  const relay = (): void => stop.abort()
  signal?.addEventListener('abort', relay)
  let outcome: Outcome
  try {
    await client.watch(CSR_PATH, { fieldSelector: `metadata.name=${req.name}`, resourceVersion: rv, timeoutSeconds: seconds }, ev => {
      if (outcome !== undefined) return
      if (ev.type === 'DELETED') outcome = { err: new CsrWaitError(`csr "${req.name}" was deleted`) }
      else if (ev.type === 'ADDED' || ev.type === 'MODIFIED') outcome = onObject(ev.object)
      if (outcome !== undefined) stop.abort()
    }, stop.signal)
  } finally {
    signal?.removeEventListener('abort', relay)
  }
  return outcome
}

/** Resolves with the issued certificate's PEM; rejects with CsrRejectedError, CsrWaitError, or the abort. */
export async function waitForCertificate (client: ApiClient, req: RequestedCsr, o: WaitOptions): Promise<string> {
  const now = o.now ?? Date.now
  const pollMs = o.pollMs ?? 30_000
  const deadline = now() + o.timeoutMs
  const log = (msg: string): void => o.logger?.info({ csr: req.name }, msg)
  const settle = (obj: JsonObject): Outcome => {
    try {
      const cert = issuedCertificate(obj, req, log)
      return cert === undefined ? undefined : { cert }
    } catch (err) { return { err: err as Error } }
  }
  for (;;) {
    o.signal?.throwIfAborted()
    const left = deadline - now()
    if (left <= 0) throw new CsrWaitError(`timed out waiting for certificate signing request ${req.name} to be issued`)
    let outcome: Outcome
    const started = now()
    try {
      const obj = await client.get(`${CSR_PATH}/${req.name}`, { signal: o.signal })
      outcome = settle(obj)
      const rv = String((obj.metadata as { resourceVersion?: string } | undefined)?.resourceVersion ?? '')
      if (outcome === undefined) outcome = await watchOnce(client, req, rv, Math.max(1, Math.ceil(Math.min(pollMs, left) / 1000)), settle, o.signal)
    } catch (err) {
      o.signal?.throwIfAborted()
      if (isNotFound(err)) throw new CsrWaitError(`csr "${req.name}" was deleted`)
      o.logger?.warn({ csr: req.name, err: (err as Error).message }, 'reading the certificate signing request failed; retrying')
    }
    if (outcome !== undefined) {
      if ('err' in outcome) throw outcome.err
      return outcome.cert
    }
    // A watch that ended (or failed) at once must not spin: the poll interval spaces the reads.
    const spent = now() - started
    if (spent < 1000) await sleepFor(Math.min(pollMs, Math.max(0, deadline - now())), undefined, { signal: o.signal })
  }
}
