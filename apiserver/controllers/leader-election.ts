// Leader election on a coordination Lease, as client-go's: one holder at a time, renewed, taken over when it lapses.

import { RESOURCES, type ApiClient, type Obj } from './client/types.js'
import type { ControllerClock } from './clock.js'
import type { Logger } from '../registry/core.js'

export interface LeaderElectionOptions {
  client: ApiClient
  clock: ControllerClock
  logger: Logger
  /** This candidate's identity (hostname_uuid in Kubernetes). */
  identity: string
  namespace: string
  name: string
  /** LeaderElectionConfiguration defaults: 15 s, 10 s, 2 s. */
  leaseDurationMs?: number
  renewDeadlineMs?: number
  retryPeriodMs?: number
  onStartedLeading(): void
  /** Leadership lost (a renewal failed past the deadline): Kubernetes' components exit here. */
  onStoppedLeading(): void
}

const micro = (ms: number): string => new Date(ms).toISOString().replace('Z', '000Z')

export class LeaderElector {
  private leading = false
  private stopped = false
  private timer?: { cancel(): void }
  private lastRenew = 0
  private readonly duration: number
  private readonly deadline: number
  private readonly retry: number

  constructor (private readonly o: LeaderElectionOptions) {
    this.duration = o.leaseDurationMs ?? 15_000
    this.deadline = o.renewDeadlineMs ?? 10_000
    this.retry = o.retryPeriodMs ?? 2_000
  }

  isLeader (): boolean { return this.leading }

  /** False when this candidate leads but has not renewed within the lease duration (client-go's HealthzAdaptor). */
  healthy (): boolean {
    return !this.leading || this.o.clock.now() - this.lastRenew <= this.duration
  }

  start (): void { void this.tick() }

  /** Stops trying; a leader releases the lease so another candidate takes over at once. */
  async stop (): Promise<void> {
    this.stopped = true
    this.timer?.cancel()
    if (!this.leading) return
    this.leading = false
    try {
      await this.o.client.resource(RESOURCES.leases).patch(this.o.namespace, this.o.name, { spec: { holderIdentity: null, leaseDurationSeconds: 1 } })
    } catch (err) {
      this.o.logger.debug({ err }, 'lease not released')
    }
  }

  private async tick (): Promise<void> {
    if (this.stopped) return
    let ok = false
    try {
      ok = await this.tryAcquireOrRenew()
    } catch (err) {
      this.o.logger.debug({ err }, 'leader election attempt failed')
    }
    if (this.stopped) return
    const now = this.o.clock.now()
    if (ok) {
      this.lastRenew = now
      if (!this.leading) {
        this.leading = true
        this.o.logger.info({ identity: this.o.identity, lease: `${this.o.namespace}/${this.o.name}` }, 'became leader')
        this.o.onStartedLeading()
      }
    } else if (this.leading && now - this.lastRenew > this.deadline) {
      this.leading = false
      this.o.logger.warn({ identity: this.o.identity }, 'leadership lost')
      this.o.onStoppedLeading()
      return
    }
    this.timer = this.o.clock.after(this.retry, () => { void this.tick() })
  }

  private async tryAcquireOrRenew (): Promise<boolean> {
    const leases = this.o.client.resource(RESOURCES.leases)
    const now = this.o.clock.now()
    const spec = (prior?: Obj): Obj => ({
      holderIdentity: this.o.identity,
      leaseDurationSeconds: Math.round(this.duration / 1000),
      acquireTime: prior?.holderIdentity === this.o.identity ? prior.acquireTime : micro(now),
      renewTime: micro(now),
      leaseTransitions: prior === undefined ? 0 : prior.holderIdentity === this.o.identity ? (prior.leaseTransitions ?? 0) : (prior.leaseTransitions ?? 0) + 1
    })
    const current = await leases.get(this.o.namespace, this.o.name)
    if (current === undefined) {
      await leases.create(this.o.namespace, { apiVersion: 'coordination.orch.io/v1', kind: 'Lease', metadata: { name: this.o.name, namespace: this.o.namespace }, spec: spec() })
      return true
    }
    const s = (current.spec ?? {}) as Obj
    const holder = s.holderIdentity ?? ''
    const renewed = Date.parse(String(s.renewTime ?? '')) || 0
    const expired = renewed + (s.leaseDurationSeconds ?? 15) * 1000 <= now
    if (holder !== '' && holder !== this.o.identity && !expired) return false
    // Optimistic concurrency: the update names the resourceVersion read, so two candidates cannot both win.
    await leases.update(this.o.namespace, { ...current, spec: spec(s) })
    return true
  }
}
