// The process and Node.js runtime metrics (prom-client's default collectors) of this process, one set for every component.

import { Registry, collectDefaultMetrics } from 'prom-client'

/**
 * One registry holding prom-client's default collectors. Every component's /metrics exposes it beside its own metrics,
 * as each component of Kubernetes exposes its process's.
 */
export class ProcessMetrics {
  readonly registry = new Registry()

  constructor () {
    collectDefaultMetrics({ register: this.registry })
  }
}

let shared: ProcessMetrics | undefined

/**
 * The process's one set. Module-level on purpose: what the collectors read (CPU, memory, heap, the event loop, GC) is
 * the process's, and each set costs an event-loop-delay histogram sampling every 10 ms and a GC observer, so `orch up`
 * (API server, controller manager, scheduler and orchlet in one process) had four of each measuring the same thing.
 */
export function processMetrics (): ProcessMetrics {
  shared ??= new ProcessMetrics()
  return shared
}
