// Watch events as the hub shares them: converted from store events once, parsed at most once, encoded once per media type.

import type { WatchEvent } from '../storage/store.js'
import type { StatusError } from '../errors/status-error.js'
import type { ApiWatchEvent, ApiWatchEventType, WatchEncoder } from './types.js'
import { parseJson, rewriteResourceVersion, type Obj } from './object-meta.js'

export type Convert = (bytes: Buffer) => Buffer

export class HubEvent implements ApiWatchEvent {
  readonly type: ApiWatchEventType
  readonly raw: Buffer
  readonly resourceVersion: string
  readonly revision: number
  /** Storage key of the object ('' for bookmarks and errors). */
  readonly key: string
  /** Arrival order in the hub that shares it (-1 for events it did not receive live: catch-up, synthetic). */
  seq = -1
  /** For MODIFIED: the object before the change (served bytes), for selector transitions. */
  private readonly prevBytes?: Buffer
  private parsed?: Obj
  private prevParsed?: Obj
  private readonly encoded = new Map<string, Buffer>()
  private lastKey?: string
  private lastBytes?: Buffer
  private enteredEvent?: HubEvent
  private leftEvent?: HubEvent

  constructor (type: ApiWatchEventType, raw: Buffer, revision: number, key: string, prevBytes?: Buffer) {
    this.type = type
    this.raw = raw
    this.revision = revision
    this.resourceVersion = String(revision)
    this.key = key
    this.prevBytes = prevBytes
  }

  object (): Obj {
    return (this.parsed ??= parseJson(this.raw))
  }

  /** The object before a MODIFIED change, undefined for other types. */
  prevObject (): Obj | undefined {
    if (this.prevBytes === undefined) return undefined
    return (this.prevParsed ??= parseJson(this.prevBytes))
  }

  /** Wire bytes for one encoder, made once per encoder key and shared by every watcher using it. */
  encode (encoder: WatchEncoder): Buffer {
    // Every watcher of a tick asks in turn, nearly always with the same key: answer that without the map.
    if (encoder.key === this.lastKey) return this.lastBytes!
    let b = this.encoded.get(encoder.key)
    if (b === undefined) { b = encoder.encode(this); this.encoded.set(encoder.key, b) }
    this.lastKey = encoder.key
    this.lastBytes = b
    return b
  }

  /** The same change seen by a watcher whose selector the object just entered: ADDED. */
  entered (): HubEvent {
    return (this.enteredEvent ??= new HubEvent('ADDED', this.raw, this.revision, this.key))
  }

  /** Seen by a watcher whose selector the object just left: DELETED with the previous object at this revision. */
  left (): HubEvent {
    if (this.leftEvent === undefined) {
      const prev = this.prevBytes ?? this.raw
      this.leftEvent = new HubEvent('DELETED', rewriteResourceVersion(prev, this.resourceVersion), this.revision, this.key)
    }
    return this.leftEvent
  }
}

/** A store event as an API event: put = ADDED (create) or MODIFIED; delete carries the last object at the delete revision. */
export function fromStoreEvent (ev: WatchEvent, convert?: Convert): HubEvent {
  const c = convert ?? ((b: Buffer) => b)
  if (ev.type === 'delete') {
    return new HubEvent('DELETED', c(rewriteResourceVersion(ev.value, String(ev.revision))), ev.revision, ev.key)
  }
  const type = ev.createRevision === ev.revision ? 'ADDED' : 'MODIFIED'
  const prev = type === 'MODIFIED' && ev.prevValue !== undefined ? c(ev.prevValue) : undefined
  return new HubEvent(type, c(ev.value), ev.revision, ev.key, prev)
}

/** A synthetic ADDED for an existing object (initial events). */
export function addedEvent (bytes: Buffer, revision: number, key: string): HubEvent {
  return new HubEvent('ADDED', bytes, revision, key)
}

/**
 * BOOKMARK: an object of the kind carrying only resourceVersion, and for the end of a watch's initial events the
 * `orch.io/initial-events-end` annotation (spec §4.8), with Kubernetes' `k8s.io/initial-events-end` too ('both').
 */
export function bookmarkEvent (apiVersion: string, kind: string, revision: number, initialEventsEnd: false | 'orch' | 'both' = false): HubEvent {
  const metadata: Obj = { resourceVersion: String(revision) }
  if (initialEventsEnd !== false) {
    metadata.annotations = initialEventsEnd === 'both'
      ? { 'orch.io/initial-events-end': 'true', 'k8s.io/initial-events-end': 'true' }
      : { 'orch.io/initial-events-end': 'true' }
  }
  return new HubEvent('BOOKMARK', Buffer.from(JSON.stringify({ kind, apiVersion, metadata })), revision, '')
}

/** ERROR carrying a meta/v1 Status. */
export function errorEvent (err: StatusError): HubEvent {
  return new HubEvent('ERROR', Buffer.from(JSON.stringify(err.toStatus())), 0, '')
}
