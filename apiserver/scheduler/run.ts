// Starts the scheduler on its own informers, or on the controller manager's when both run in one process.

import type { Logger } from '../registry/core.js'
import type { ApiClient } from '../controllers/client/types.js'
import { systemControllerClock, type ControllerClock } from '../controllers/clock.js'
import { apiEventRecorder } from '../controllers/events.js'
import { InformerFactory } from '../controllers/informer.js'
import { Scheduler, type SchedulerOptions } from './scheduler.js'

export interface RunSchedulerOptions extends SchedulerOptions {
  client: ApiClient
  logger: Logger
  clock?: ControllerClock
  /** Shared informers (already started or not); without them the scheduler makes and starts its own. */
  informers?: InformerFactory
}

export function startScheduler (o: RunSchedulerOptions): { scheduler: Scheduler, stop(): void } {
  const clock = o.clock ?? systemControllerClock
  const own = o.informers === undefined
  const informers = o.informers ?? new InformerFactory(o.client, clock, o.logger)
  const scheduler = new Scheduler({ client: o.client, informers, clock, logger: o.logger, events: apiEventRecorder(o.client, o.schedulerName ?? 'default-scheduler', clock, o.logger), settings: {} }, o)
  scheduler.start()
  if (own) informers.start()
  return { scheduler, stop () { scheduler.stop(); if (own) informers.stop() } }
}
