// csrcleaner: removes CertificateSigningRequests that are done with, every hour, as kube-controller-manager's
// csrcleaner: issued ones an hour after approval or once their certificate expired, denied and failed ones an hour
// after that condition, pending ones a day after creation.

import { X509Certificate } from 'node:crypto'
import { QueueController, type ControllerContext, type ReconcileResult } from '../controller.js'
import { RESOURCES, type Obj } from '../client/types.js'
import type { SharedInformer } from '../informer.js'
import { splitPemBundle } from '../../pki/certs.js'

const KEY = 'all'
export const CSR_CLEANER_PERIOD_MS = 3600_000
const APPROVED_EXPIRATION_MS = 3600_000
const DENIED_EXPIRATION_MS = 3600_000
const PENDING_EXPIRATION_MS = 24 * 3600_000

const timeOf = (v: unknown): number => (typeof v === 'string' ? Date.parse(v) : NaN)
const olderThan = (v: unknown, ms: number, now: number): boolean => { const t = timeOf(v); return !Number.isNaN(t) && now - t > ms }

/** Why `csr` may go at `now`, or undefined while it is still of use. */
export function csrCleanupReason (csr: Obj, now: number): string | undefined {
  const conditions = (csr.status?.conditions ?? []) as Obj[]
  const certificate = typeof csr.status?.certificate === 'string' ? csr.status.certificate : ''
  if (conditions.length === 0 && olderThan(csr.metadata?.creationTimestamp, PENDING_EXPIRATION_MS, now)) return 'pending for more than 24h'
  for (const c of conditions) {
    if (c.type === 'Denied' && olderThan(c.lastUpdateTime, DENIED_EXPIRATION_MS, now)) return 'denied more than 1h ago'
    if (c.type === 'Failed' && olderThan(c.lastUpdateTime, DENIED_EXPIRATION_MS, now)) return 'failed more than 1h ago'
    if (c.type !== 'Approved' || certificate === '') continue
    if (olderThan(c.lastUpdateTime, APPROVED_EXPIRATION_MS, now)) return 'issued more than 1h ago'
    const pems = splitPemBundle(Buffer.from(certificate, 'base64').toString('utf8'))
    try {
      if (pems.some(p => Date.parse(new X509Certificate(p).validTo) < now)) return 'its certificate expired'
    } catch { /* an unparsable certificate is left to the time rules */ }
  }
  return undefined
}

export class CsrCleaner extends QueueController {
  private readonly csrs: SharedInformer

  constructor (c: ControllerContext, private readonly periodMs = CSR_CLEANER_PERIOD_MS) {
    super('csrcleaner', c)
    this.csrs = c.informers.informer(RESOURCES.certificateSigningRequests)
  }

  protected watch (): void {
    this.queue.add(KEY)
  }

  async reconcile (): Promise<ReconcileResult> {
    if (!this.csrs.hasSynced()) return { requeueAfterMs: 1000 }
    const client = this.c.client.resource(RESOURCES.certificateSigningRequests)
    for (const csr of this.csrs.list()) {
      const why = csrCleanupReason(csr, this.c.clock.now())
      if (why === undefined) continue
      this.c.logger.info({ csr: csr.metadata.name, why }, 'cleaning up certificate signing request')
      try {
        await client.delete('', String(csr.metadata.name), { preconditions: { uid: csr.metadata.uid } })
      } catch (err) {
        const code = (err as { code?: number }).code
        if (code !== 404 && code !== 409) throw err
      }
    }
    return { requeueAfterMs: this.periodMs }
  }
}
