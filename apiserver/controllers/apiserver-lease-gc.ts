// The identity Lease garbage collector: deletes the kube-system identity Leases of API servers that stopped renewing.
// As kube-apiserver's apiserverleasegc: one pass at start and every hour; a Lease expired when renewTime plus
// leaseDurationSeconds lies in the past (or either is missing), checked again on a fresh read before the delete.

import { RESOURCES, type ApiClient, type Obj } from './client/types.js'
import type { ControllerClock, Timer } from './clock.js'
import type { Logger } from '../registry/core.js'
import { IDENTITY_LABEL } from './apiserver-identity.js'

/** kube-apiserver's IdentityLeaseGCPeriod (v1.29): 3600 s. */
export const IDENTITY_LEASE_GC_PERIOD_MS = 3600_000

export interface ApiServerLeaseGcOptions {
  client: ApiClient
  clock: ControllerClock
  logger: Logger
  periodMs?: number
  namespace?: string
  /** Which Leases are identities (default `apiserver.kubernetes.io/identity=kube-apiserver`). */
  labelSelector?: string
}

/** Whether the Lease's holder stopped renewing it longer than its duration before `now`. */
export function identityLeaseExpired (lease: Obj, now: number): boolean {
  const renew = typeof lease.spec?.renewTime === 'string' ? Date.parse(lease.spec.renewTime) : NaN
  const duration = lease.spec?.leaseDurationSeconds
  if (Number.isNaN(renew) || typeof duration !== 'number') return true
  return renew + duration * 1000 < now
}

export class ApiServerLeaseGc {
  private timer?: Timer
  private stopped = false
  private running?: Promise<void>

  constructor (private readonly o: ApiServerLeaseGcOptions) {}

  start (): void { this.tick() }

  stop (): void {
    this.stopped = true
    this.timer?.cancel()
  }

  /** One pass (tests call it; the timer runs it every period). Resolves to the names deleted. */
  async collect (): Promise<string[]> {
    const ns = this.o.namespace ?? 'kube-system'
    const leases = this.o.client.resource(RESOURCES.leases)
    const list = await leases.list(ns, { labelSelector: this.o.labelSelector ?? `${IDENTITY_LABEL}=kube-apiserver` })
    const deleted: string[] = []
    for (const lease of list.items) {
      if (this.stopped || !identityLeaseExpired(lease, this.o.clock.now())) continue
      const name = String(lease.metadata.name)
      try {
        // A fresh read: its holder may have renewed it since the list.
        const cur = await leases.get(ns, name)
        if (cur === undefined || !identityLeaseExpired(cur, this.o.clock.now())) continue
        await leases.delete(ns, name, { preconditions: { uid: cur.metadata.uid, resourceVersion: cur.metadata.resourceVersion } })
        deleted.push(name)
        this.o.logger.info({ lease: `${ns}/${name}`, holder: cur.spec?.holderIdentity }, 'deleted the expired identity lease of an API server')
      } catch (err) {
        this.o.logger.warn({ err, lease: `${ns}/${name}` }, 'expired identity lease not deleted')
      }
    }
    return deleted
  }

  private tick (): void {
    if (this.stopped) return
    this.running ??= this.collect()
      .catch(err => { this.o.logger.warn({ err }, 'identity lease garbage collection failed') })
      .then(() => { this.running = undefined })
    this.timer = this.o.clock.after(this.o.periodMs ?? IDENTITY_LEASE_GC_PERIOD_MS, () => this.tick())
  }
}
