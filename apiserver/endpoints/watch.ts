// Watch streams: per-media WatchEncoders, a chunked sink writing shared pre-framed batches, timeouts and slow-consumer cut-off.

import type { ServerResponse } from 'node:http'
import type { StatusError } from '../errors/status-error.js'
import type { WatchEncoder, WatchSink, WatchSubscription } from '../registry/types.js'
import type { ResponseMedia } from './negotiate.js'
import { WatchBatch } from '../registry/watch-batch.js'
import { buildTable, partialObjectMetadata, type TableConvertor } from './table.js'
import { encodeEnvelope, encodeWatchFrame } from './protobuf/encode.js'
import type { Messages } from './protobuf/messages.js'

/** A watcher whose unsent bytes pass this is cut off instead of buffering without bound. */
export const DEFAULT_MAX_PENDING_BYTES = 16 * 1024 * 1024

const NL = Buffer.from('}\n')

function eventPrefix (type: string): Buffer {
  return Buffer.from(`{"type":"${type}","object":`)
}

/** `{"type":"ADDED","object":<served bytes>}\n`: the object bytes are not re-serialized. */
export function jsonWatchEncoder (): WatchEncoder {
  const prefixes = new Map<string, Buffer>()
  return {
    key: 'json',
    encode (event) {
      let p = prefixes.get(event.type)
      if (p === undefined) { p = eventPrefix(event.type); prefixes.set(event.type, p) }
      return Buffer.concat([p, event.raw, NL])
    }
  }
}

/** Each event's object is a Table with the one row (what `kubectl get -w` asks for); ERROR events carry the Status. */
export function tableWatchEncoder (conv: TableConvertor, metaGroup: string, resourceKey: string): WatchEncoder {
  return {
    key: `table:${metaGroup}:${resourceKey}`,
    encode (event) {
      if (event.type === 'ERROR') return Buffer.concat([eventPrefix('ERROR'), event.raw, NL])
      const object = event.object()
      const table = event.type === 'BOOKMARK'
        ? buildTable(conv, metaGroup, [], { resourceVersion: event.resourceVersion })
        : buildTable(conv, metaGroup, [object], {})
      return Buffer.from(JSON.stringify({ type: event.type, object: table }) + '\n')
    }
  }
}

/** Events whose object is PartialObjectMetadata (metadata-only informers). */
export function metadataWatchEncoder (metaGroup: string, resourceKey: string): WatchEncoder {
  return {
    key: `meta:${metaGroup}:${resourceKey}`,
    encode (event) {
      if (event.type === 'ERROR') return Buffer.concat([eventPrefix('ERROR'), event.raw, NL])
      const meta = (event.object().metadata ?? {}) as Record<string, unknown>
      return Buffer.from(JSON.stringify({ type: event.type, object: partialObjectMetadata(metaGroup, meta) }) + '\n')
    }
  }
}

/**
 * Kubernetes' protobuf watch: each event a 4-byte big-endian length and a WatchEvent whose object is the envelope.
 * One key for all watchers: the hub encodes an event once for every protobuf watcher.
 */
export function protobufWatchEncoder (messages: Messages): WatchEncoder {
  return {
    key: 'protobuf',
    encode (event) {
      return encodeWatchFrame(event.type, encodeEnvelope(event.object(), messages))
    }
  }
}

/** The Content-Type of a watch response in `media`. */
export function watchContentType (media: ResponseMedia): string {
  return media.form === 'protobuf' ? `${media.contentType};stream=watch` : 'application/json'
}

export function watchEncoderFor (media: ResponseMedia, conv: TableConvertor, resourceKey: string): WatchEncoder {
  if (media.form === 'protobuf') return protobufWatchEncoder(media.messages)
  if (media.form === 'table') return tableWatchEncoder(conv, media.tableGroup, resourceKey)
  if (media.form === 'metadata') return metadataWatchEncoder(media.metaGroup, resourceKey)
  return jsonWatchEncoder()
}

/** Kubernetes' default: a random duration between --min-request-timeout (30 min) and twice that. */
export function defaultWatchTimeoutMs (random: () => number, minRequestTimeoutMs = 1_800_000): number {
  return Math.floor(minRequestTimeoutMs * (1 + random()))
}

export interface WatchStream {
  sink: WatchSink
  /** Hands over the registry's subscription and starts the response if nothing was written yet. */
  attach(sub: WatchSubscription): void
  /** Ends the stream from the server side (shutdown). */
  close(): void
  /** True once the 200 head went out (before that an error can still be answered as a Status). */
  readonly started: boolean
  readonly closed: boolean
}

/** Counts a watch's sent events (the request metrics); `closed` once it ends. */
export interface WatchCounter {
  sent(events: readonly Buffer[]): void
  closed(): void
}

/**
 * `sink` with every written event counted. Shared batches stay shared: the hub frames a tick's events once for all
 * the watchers that receive them, which a sink without writeShared would undo (a copy per watcher).
 */
export function countingSink (sink: WatchSink, counter: WatchCounter): WatchSink {
  return {
    write (chunks) { counter.sent(chunks); sink.write(chunks) },
    writeShared (batch) { counter.sent(batch.chunks); if (sink.writeShared !== undefined) sink.writeShared(batch); else sink.write([...batch.chunks]) },
    end (err) { sink.end(err) }
  }
}

export interface WatchStreamOptions {
  timeoutMs: number
  maxPendingBytes?: number
  onClose?: () => void
  onSlowConsumer?: () => void
  /** Absent: application/json. */
  contentType?: string
}

/**
 * A chunked 200 response fed by the registry's sink. The head is written lazily (first write or
 * attach), so a watch the registry refuses up front can still be answered with a plain Status.
 */
export function createWatchStream (res: ServerResponse, headers: Record<string, string | string[]>, opts: WatchStreamOptions): WatchStream {
  const maxPending = opts.maxPendingBytes ?? DEFAULT_MAX_PENDING_BYTES
  let sub: WatchSubscription | undefined
  let closed = false
  let started = false
  let timer: NodeJS.Timeout | undefined

  function start (): void {
    if (started || closed) return
    started = true
    res.writeHead(200, { ...headers, 'Content-Type': opts.contentType ?? 'application/json', 'Cache-Control': 'no-cache, private', 'Transfer-Encoding': 'chunked' })
    res.flushHeaders()
    timer = setTimeout(() => finish(false), opts.timeoutMs)
  }

  function finish (destroy: boolean): void {
    if (closed) return
    closed = true
    if (timer !== undefined) clearTimeout(timer)
    sub?.stop()
    if (destroy) res.destroy()
    else if (started && !res.writableEnded) res.end()
    opts.onClose?.()
  }
  res.on('close', () => finish(false))

  function writeBatch (batch: WatchBatch): void {
    if (closed || batch.length === 0) return
    start()
    // The batch comes framed as one HTTP chunk shared by every watcher with the same events: it goes straight to
    // the socket when the response owns it with nothing queued before it, else through the response's own framing.
    const sock = res.socket
    if (sock !== null && res.chunkedEncoding && !res.writableEnded && res.writableLength === sock.writableLength) {
      sock.write(batch.chunkedFrame())
    } else {
      res.write(batch.payload())
    }
    if (res.writableLength > maxPending) {
      opts.onSlowConsumer?.()
      finish(true)
    }
  }

  const sink: WatchSink = {
    write (chunks: Buffer[]) { writeBatch(new WatchBatch(chunks)) },
    writeShared: writeBatch,
    end (_err?: StatusError) {
      start()
      finish(false)
    }
  }
  return {
    sink,
    attach (s) { sub = s; if (closed) s.stop(); else start() },
    close () { finish(false) },
    get started () { return started },
    get closed () { return closed }
  }
}
