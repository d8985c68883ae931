// Several `orch up` on one etcd: the in-process controllers and scheduler run only in the one holding a Lease.
import { hostname } from 'node:os'
import { randomUUID } from 'node:crypto'
import type { Logger } from 'pino'
import { LeaderElector } from '../controllers/leader-election.js'
import { inProcessClient } from '../controllers/client/in-process.js'
import { systemControllerClock } from '../controllers/clock.js'
import type { Registry } from '../registry/types.js'

/** The Lease (kube-system) the API servers of one cluster elect their in-process workloads' runner on. */
export const CONTROL_PLANE_LEASE = 'orch-control-plane'

/**
 * Starts `start()` once this server leads, stops what it started when leadership is lost and then stands again for
 * election. Returns a stop that also releases the Lease, so another server takes over at once.
 */
export function electedWorkloads (registry: Registry, logger: Logger, start: () => { stop(): void }): { stop(): void } {
  const identity = `${hostname()}_${randomUUID()}`
  let running: { stop(): void } | undefined
  let elector: LeaderElector | undefined
  let stopped = false
  const stand = (): void => {
    if (stopped) return
    elector = new LeaderElector({
      client: inProcessClient(registry, 'orch-control-plane'),
      clock: systemControllerClock,
      logger: logger.child({ component: 'leader-election' }),
      identity,
      namespace: 'kube-system',
      name: CONTROL_PLANE_LEASE,
      onStartedLeading: () => { running = start() },
      onStoppedLeading: () => { running?.stop(); running = undefined; stand() }
    })
    elector.start()
  }
  stand()
  return {
    stop () {
      stopped = true
      running?.stop()
      running = undefined
      void elector?.stop()
    }
  }
}
