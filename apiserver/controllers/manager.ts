// The controller manager: builds the enabled controllers on shared informers and runs them until stopped.

import type { Logger } from '../registry/core.js'
import type { ApiClient } from './client/types.js'
import { systemControllerClock, type ControllerClock } from './clock.js'
import type { Controller, ControllerContext, ControllerSettings } from './controller.js'
import { apiEventRecorder } from './events.js'
import { InformerFactory } from './informer.js'
import { CONTROLLERS, type ControllerName } from './registry.js'
import { bootstrapClusterObjects } from './cluster/bootstrap.js'
import type { ComponentMetrics } from '../metrics/component-metrics.js'
import { WorkqueueMetricsProvider } from '../metrics/workqueue-metrics.js'

export interface ControllerManagerOptions {
  client: ApiClient
  logger: Logger
  clock?: ControllerClock
  /** kube-controller-manager's `--controllers`: `*` (all on by default), `name`, `-name`. */
  controllers?: string[]
  /** Workers per controller (the Concurrent*Syncs settings); default 5. */
  concurrency?: Partial<Record<ControllerName, number>>
  settings?: ControllerSettings
  /** The controller manager's registry: each controller's work queue reports workqueue_* there. */
  metrics?: ComponentMetrics
}

export interface RunningControllers {
  readonly controllers: ReadonlyMap<ControllerName, Controller>
  readonly informers: InformerFactory
  stop(): void
}

/** Whether `name` is enabled by a `--controllers` list (`*` enables all, `-name` disables one, later entries do not override earlier ones). */
export function controllerEnabled (name: string, list: string[]): boolean {
  for (const entry of list) {
    if (entry === name) return true
    if (entry === `-${name}`) return false
  }
  return list.includes('*')
}

export function startControllerManager (o: ControllerManagerOptions): RunningControllers {
  const clock = o.clock ?? systemControllerClock
  const informers = new InformerFactory(o.client, clock, o.logger)
  const c: ControllerContext = { client: o.client, informers, clock, logger: o.logger, events: apiEventRecorder(o.client, 'orch-controller-manager', clock, o.logger), settings: o.settings ?? {}, workqueueMetrics: o.metrics === undefined ? undefined : new WorkqueueMetricsProvider(o.metrics) }
  const list = o.controllers ?? ['*']
  const running = new Map<ControllerName, Controller>()
  for (const [name, make] of Object.entries(CONTROLLERS) as Array<[ControllerName, (c: ControllerContext) => Controller | undefined]>) {
    if (!controllerEnabled(name, list)) continue
    const ctrl = make(c)
    // A controller with nothing to do in this configuration (the root CA publisher without a CA) is not started.
    if (ctrl === undefined) continue
    ctrl.start(o.concurrency?.[name] ?? 5)
    running.set(name, ctrl)
  }
  informers.start()
  void bootstrapClusterObjects(o.client, o.logger)
  return {
    controllers: running,
    informers,
    stop () {
      for (const ctrl of running.values()) ctrl.stop()
      informers.stop()
    }
  }
}
