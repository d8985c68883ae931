// Events about the store's space: a core v1 Event in `default` when the store becomes full (StorageFull) and when
// it has room again (StorageSpaceRecovered), about the API server itself.
//
// Written when space allows: the StorageFull event usually cannot be written at the moment the store fills (that
// write would be refused too), so it is kept and written, with its own time, just before the recovery event.
// An event that cannot be written otherwise is skipped (logged at debug); at most one is pending.

import type { SpaceStatus, Store } from '../storage/store.js'
import { isStatusError } from '../errors/status-error.js'
import type { Clock, Logger } from './core.js'
import { internalContext } from './internal-context.js'
import { rfc3339 } from './object-meta.js'
import type { Registry } from './types.js'

export interface StorageSpaceEventsOptions {
  registry: Registry
  store: Pick<Store, 'onSpaceChange' | 'space'>
  clock: Clock
  logger: Logger
  /** `source.host` and `reportingInstance` of the events. */
  host: string
}

export const STORAGE_FULL = 'StorageFull'
export const STORAGE_SPACE_RECOVERED = 'StorageSpaceRecovered'

/** The API server, as the events' involvedObject names it. */
export const API_SERVER_REF = { kind: 'APIServer', name: 'orch-apiserver' }
const COMPONENT = 'orch-apiserver'

interface PendingEvent { reason: string, type: 'Warning' | 'Normal', message: string, ms: number }

export interface StorageSpaceEvents {
  /** Stops listening; events being written finish. */
  stop(): Promise<void>
}

export function startStorageSpaceEvents (o: StorageSpaceEventsOptions): StorageSpaceEvents {
  let pendingFull: PendingEvent | undefined
  let lastNanos = 0n
  let chain: Promise<void> = Promise.resolve()

  function eventName (ms: number): string {
    let nanos = BigInt(ms) * 1_000_000n
    if (nanos <= lastNanos) nanos = lastNanos + 1n
    lastNanos = nanos
    return `${API_SERVER_REF.name}.${nanos.toString(16)}`
  }

  /** Writes one event; resolves with whether the store refused it for want of space. */
  async function write (e: PendingEvent): Promise<'written' | 'no-space' | 'failed'> {
    const handler = o.registry.handler('', 'v1', 'events')
    if (handler === undefined) return 'failed'
    const stamp = rfc3339(e.ms)
    const object = {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: eventName(e.ms), namespace: 'default' },
      involvedObject: { ...API_SERVER_REF },
      reason: e.reason,
      message: e.message,
      source: { component: COMPONENT, host: o.host },
      firstTimestamp: stamp,
      lastTimestamp: stamp,
      count: 1,
      type: e.type,
      eventTime: null,
      reportingComponent: COMPONENT,
      reportingInstance: o.host
    }
    try {
      await handler.create(internalContext('system:apiserver', COMPONENT), 'default', { object: object, duplicateFields: [] })
      return 'written'
    } catch (err) {
      if (isStatusError(err) && err.code === 507) return 'no-space'
      o.logger.debug({ err, reason: e.reason }, 'storage space event not written')
      return 'failed'
    }
  }

  async function onChange (status: SpaceStatus): Promise<void> {
    const ms = o.clock.now()
    if (status.full) {
      const e: PendingEvent = { reason: STORAGE_FULL, type: 'Warning', message: status.message, ms }
      pendingFull = (await write(e)) === 'no-space' ? e : undefined
      return
    }
    if (pendingFull !== undefined) {
      const full = pendingFull
      pendingFull = undefined
      await write(full)
    }
    await write({ reason: STORAGE_SPACE_RECOVERED, type: 'Normal', message: status.message, ms })
  }

  const enqueue = (status: SpaceStatus): void => {
    // one transition at a time, in order
    chain = chain.then(() => onChange(status)).catch(err => o.logger.debug({ err }, 'storage space event failed'))
  }
  const unsubscribe = o.store.onSpaceChange(enqueue)
  // a store that opened full (it was full when it stopped) made its transition before anyone listened
  const initial = o.store.space()
  if (initial.full) enqueue(initial)

  return {
    async stop () {
      unsubscribe()
      await chain
    }
  }
}
