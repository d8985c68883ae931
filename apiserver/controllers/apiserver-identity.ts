// The API server's identity Lease (APIServerIdentity): one Lease per running API server in kube-system, renewed
// while it serves, so clients and peers can count the API servers of a cluster sharing one store.

import { createHash, randomUUID } from 'node:crypto'
import { RESOURCES, type ApiClient, type Obj } from './client/types.js'
import type { ControllerClock } from './clock.js'
import type { Logger } from '../registry/core.js'

export const IDENTITY_LABEL = 'apiserver.kubernetes.io/identity'

export interface ApiServerIdentityOptions {
  client: ApiClient
  clock: ControllerClock
  logger: Logger
  hostname: string
  /** Told apart from other API servers on the same host (Kubernetes hashes the hostname; two orch on one box differ by URL). */
  url: string
  /** Renewal period (Kubernetes: 10 s) and lease duration (Kubernetes: 3600 s). */
  renewMs?: number
  leaseDurationSeconds?: number
}

const micro = (ms: number): string => new Date(ms).toISOString().replace('Z', '000Z')

export class ApiServerIdentity {
  /** `apiserver-<hash>`: the Lease's name in kube-system. */
  readonly leaseName: string
  readonly holder = `apiserver-${randomUUID()}`
  private timer?: { cancel(): void }
  private stopped = false

  constructor (private readonly o: ApiServerIdentityOptions) {
    const hash = createHash('sha256').update(`${o.hostname}|${o.url}`).digest('hex').slice(0, 26)
    this.leaseName = `apiserver-${hash}`
  }

  start (): void { void this.renew() }

  /** Stops renewing and deletes the Lease (a stopped server is no longer one of the cluster's). */
  async stop (): Promise<void> {
    this.stopped = true
    this.timer?.cancel()
    await this.o.client.resource(RESOURCES.leases).delete('kube-system', this.leaseName).catch(() => {})
  }

  private async renew (): Promise<void> {
    if (this.stopped) return
    const leases = this.o.client.resource(RESOURCES.leases)
    const now = micro(this.o.clock.now())
    try {
      const cur = await leases.get('kube-system', this.leaseName)
      const spec = { holderIdentity: this.holder, leaseDurationSeconds: this.o.leaseDurationSeconds ?? 3600, renewTime: now }
      if (cur === undefined) {
        await leases.create('kube-system', {
          apiVersion: 'coordination.orch.io/v1',
          kind: 'Lease',
          metadata: { name: this.leaseName, namespace: 'kube-system', labels: { [IDENTITY_LABEL]: 'kube-apiserver', 'kubernetes.io/hostname': this.o.hostname } },
          spec: { ...spec, acquireTime: now }
        })
      } else {
        await leases.update('kube-system', { ...cur, spec: { ...(cur.spec as Obj), ...spec } })
      }
    } catch (err) {
      this.o.logger.warn({ err }, 'apiserver identity lease not renewed')
    }
    if (!this.stopped) this.timer = this.o.clock.after(this.o.renewMs ?? 10_000, () => { void this.renew() })
  }
}
