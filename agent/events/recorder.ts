// Records core/v1 Events as the kubelet does: correlated (repeats bump count), spam-filtered, rate limited, written in order.

import type { ApiClient, JsonObject } from '../../apiserver/client/rest-client.js'
import { isConflict, isNotFound } from '../../apiserver/client/rest-client.js'
import { createTokenBucket, systemClock, type Clock, type RateLimiter } from '../../apiserver/client/rate-limiter.js'

/** What an event is about, as core/v1 ObjectReference. `fieldPath` is e.g. `spec.containers{main}`. */
export interface ObjectReference {
  kind: string
  name: string
  namespace?: string
  uid?: string
  apiVersion?: string
  resourceVersion?: string
  fieldPath?: string
}

export type EventType = 'Normal' | 'Warning'

/** The interface the rest of the agent records through. `event` never throws and never waits. */
export interface EventRecorder {
  event(ref: ObjectReference, type: EventType, reason: string, message: string): void
  /** Resolves once every event recorded so far has been written (or dropped). */
  flush(): Promise<void>
  /** Stops accepting events; pending writes still finish (await flush()). */
  stop(): void
}

export interface RecorderLogger {
  info(o: object, m?: string): void
  warn(o: object, m?: string): void
}

export interface EventRecorderOptions {
  /** Absent in standalone mode: there is no API server, so events are logged instead. */
  client?: ApiClient
  /** source.component and reportingComponent. */
  component: string
  /** source.host and reportingInstance: the node name. */
  host: string
  /** --event-qps / --event-burst; qps 0 means unlimited. */
  qps: number
  burst: number
  logger: RecorderLogger
  now?: () => number
  clock?: Clock
  /** Events waiting to be written beyond this are dropped with a warning (client-go's broadcaster queue is 1000). */
  maxQueue?: number
}

/** client-go's EventSourceObjectSpamFilter: per source+object, a bucket of 25 refilled once every 5 minutes. */
const SPAM_BURST = 25
const SPAM_REFILL_MS = 5 * 60 * 1000
/** Core/v1 Event messages above this are cut (the API server rejects longer ones). */
const MAX_MESSAGE = 1024
/** Correlation entries kept (client-go's LRU holds 4096). */
const MAX_CACHE = 4096

interface Written { name: string; namespace: string; count: number; firstTimestamp: string; object?: JsonObject }

function rfc3339 (ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d+Z$/, 'Z')
}

function refKey (r: ObjectReference): string {
  return [r.kind, r.namespace ?? '', r.name, r.uid ?? '', r.apiVersion ?? '', r.fieldPath ?? ''].join('\u0000')
}

export function createEventRecorder (o: EventRecorderOptions): EventRecorder {
  const now = o.now ?? Date.now
  const clock = o.clock ?? systemClock
  const maxQueue = o.maxQueue ?? 1000
  const limiter: RateLimiter = createTokenBucket(o.qps, o.burst, clock)
  const correlated = new Map<string, Written>()
  const spam = new Map<string, { tokens: number; last: number }>()
  let lastNanos = 0n
  let queued = 0
  let tail: Promise<void> = Promise.resolve()
  let stopped = false

  /** Names are `<object>.<hex unix nanoseconds>`, strictly increasing so two events in one ms never clash. */
  function eventName (ref: ObjectReference, ms: number): string {
    let nanos = BigInt(ms) * 1_000_000n
    if (nanos <= lastNanos) nanos = lastNanos + 1n
    lastNanos = nanos
    return `${ref.name}.${nanos.toString(16)}`
  }

  function allowedBySpamFilter (ref: ObjectReference, ms: number): boolean {
    const key = refKey({ ...ref, fieldPath: undefined })
    const b = spam.get(key) ?? { tokens: SPAM_BURST, last: ms }
    b.tokens = Math.min(SPAM_BURST, b.tokens + (ms - b.last) / SPAM_REFILL_MS)
    b.last = ms
    spam.set(key, b)
    if (b.tokens < 1) return false
    b.tokens -= 1
    return true
  }

  function remember (key: string, w: Written): void {
    correlated.delete(key)
    correlated.set(key, w)
    if (correlated.size > MAX_CACHE) correlated.delete(correlated.keys().next().value as string)
  }

  function build (ref: ObjectReference, type: EventType, reason: string, message: string, w: Written, stamp: string): JsonObject {
    const involvedObject: JsonObject = { kind: ref.kind, name: ref.name }
    for (const k of ['namespace', 'uid', 'apiVersion', 'resourceVersion', 'fieldPath'] as const) if (ref[k] !== undefined && ref[k] !== '') involvedObject[k] = ref[k]
    return {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: w.name, namespace: w.namespace },
      involvedObject,
      reason,
      message,
      source: { component: o.component, host: o.host },
      firstTimestamp: w.firstTimestamp,
      lastTimestamp: stamp,
      count: w.count,
      type,
      eventTime: null,
      reportingComponent: o.component,
      reportingInstance: o.host
    }
  }

  async function write (client: ApiClient, key: string, ref: ObjectReference, type: EventType, reason: string, message: string, ms: number): Promise<void> {
    const stamp = rfc3339(ms)
    const prev = correlated.get(key)
    const path = (ns: string) => `/api/v1/namespaces/${encodeURIComponent(ns)}/events`
    if (prev?.object !== undefined) {
      const w: Written = { ...prev, count: prev.count + 1 }
      const body = { ...build(ref, type, reason, message, w, stamp), metadata: prev.object.metadata }
      try {
        const updated = await client.update(`${path(w.namespace)}/${encodeURIComponent(w.name)}`, body, { exempt: true })
        remember(key, { ...w, object: updated })
        return
      } catch (err) {
        if (isConflict(err)) {
          // Someone else touched it: take the current count and try once more.
          const current = await client.get(`${path(w.namespace)}/${encodeURIComponent(w.name)}`, { exempt: true })
          const count = Number(current.count ?? prev.count) + 1
          const updated = await client.update(`${path(w.namespace)}/${encodeURIComponent(w.name)}`, { ...body, count, metadata: current.metadata }, { exempt: true })
          remember(key, { ...w, count, object: updated })
          return
        }
        if (!isNotFound(err)) throw err
        // The aggregated event expired or was deleted: start a new one.
      }
    }
    const w: Written = { name: eventName(ref, ms), namespace: ref.namespace || 'default', count: 1, firstTimestamp: stamp }
    const created = await client.create(path(w.namespace), build(ref, type, reason, message, w, stamp), { exempt: true })
    remember(key, { ...w, object: created })
  }

  return {
    event (ref, type, reason, message) {
      if (stopped) return
      const ms = now()
      const text = message.length > MAX_MESSAGE ? message.slice(0, MAX_MESSAGE - 3) + '...' : message
      const client = o.client
      if (client === undefined) {
        o.logger.info({ event: { object: `${ref.kind}/${ref.namespace ? ref.namespace + '/' : ''}${ref.name}`, fieldPath: ref.fieldPath, type, reason } }, text)
        return
      }
      if (!allowedBySpamFilter(ref, ms)) return
      if (queued >= maxQueue) {
        o.logger.warn({ reason, object: ref.name }, 'event queue is full; dropping event')
        return
      }
      queued++
      const key = [refKey(ref), type, reason, text].join('\u0001')
      tail = tail.then(async () => {
        try {
          await limiter.acquire()
          await write(client, key, ref, type, reason, text, ms)
        } catch (err) {
          o.logger.warn({ reason, object: ref.name, err: (err as Error).message }, 'could not write event')
        } finally {
          queued--
        }
      })
    },
    flush: async () => { await tail },
    stop () { stopped = true }
  }
}
