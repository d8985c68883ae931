// Streamed LIST: an unlimited list (selected or not) read from the store in chunks at the revision of the first, as the consumer asks.

import type { JoinedPage, ListOptions } from '../storage/store.js'
import type { ListResult } from './types.js'
import { servedBytes, type ResourceCore } from './core.js'
import { toStatusError } from './storage-errors.js'
import { keyAfter } from './keys.js'
import { parseJson } from './object-meta.js'
import type { Selector } from './selectors.js'

/**
 * Keys per store read of a streamed LIST: enough to amortise a read, few enough that a chunk (about 1.5 MB of 1 KiB
 * objects) and the one being sent are all a LIST holds in memory.
 */
export const STREAM_CHUNK = 1000

/** `index`: the selector's index terms (ListOptions.index), when it has some. */
export interface StreamPlan { revision?: number, notOlderThan?: number, startKey?: string, index?: string[] }

/**
 * The first chunk (`joined`), read as a plain list would be (the answer's resourceVersion is its revision), and the
 * rest as an iterable reading the next chunk at that revision each time it is asked for one, each joined by
 * `separator`.
 * `scan` lets a watch cache serve every chunk from the snapshot of the first; `noCount` keeps each read at the size
 * of its chunk.
 */
export async function streamList (core: ResourceCore, prefix: string, plan: StreamPlan, separator: Buffer, chunk = STREAM_CHUNK, selector?: Selector): Promise<ListResult> {
  const first = await joinedPage(core, prefix, {
    revision: plan.revision, startKey: plan.startKey, limit: chunk, notOlderThan: plan.notOlderThan, noCount: true, scan: true, index: plan.index
  }, separator, selector)
  const out: ListResult = { items: [], joined: first.bytes, resourceVersion: String(first.revision), continue: '' }
  if (first.remaining > 0 && first.lastKey !== undefined) {
    out.rest = chunksAfter(core, prefix, first.revision, keyAfter(first.lastKey), separator, chunk, selector, plan.index)
  }
  return out
}

async function * chunksAfter (core: ResourceCore, prefix: string, revision: number, startKey: string, separator: Buffer,
  chunk: number, selector: Selector | undefined, index: string[] | undefined): AsyncGenerator<Buffer> {
  for (;;) {
    let page: JoinedPage
    try {
      page = await joinedPage(core, prefix, { revision, startKey, limit: chunk, noCount: true, scan: true, index }, separator, selector)
    } catch (err) {
      throw toStatusError(err, { resource: core.qr, op: 'list', requested: revision })
    }
    if (page.lastKey === undefined) return
    if (page.count > 0) yield page.bytes
    if (page.remaining === 0) return
    startKey = keyAfter(page.lastKey)
  }
}

/**
 * A chunk joined by the store when it can (the items served as stored), else joined here. With a selector, the
 * chunk's keys are scanned and only the matching items joined: `count` counts those, `lastKey` is the last key
 * scanned (where the next chunk starts).
 */
export async function joinedPage (core: ResourceCore, prefix: string, opts: ListOptions, separator: Buffer, selector?: Selector): Promise<JoinedPage> {
  if (selector === undefined && core.store.listJoined !== undefined && core.apiVersion === core.storedApiVersion) {
    return await core.store.listJoined(prefix, opts, separator)
  }
  const res = await core.store.list(prefix, opts)
  const parts: Buffer[] = []
  let count = 0
  for (const kv of res.items) {
    if (selector !== undefined && !selector.matches(parseJson(kv.value))) continue
    if (count++ > 0) parts.push(separator)
    parts.push(servedBytes(core, kv.value))
  }
  return { bytes: Buffer.concat(parts), count, lastKey: res.items[res.items.length - 1]?.key, revision: res.revision, remaining: res.remaining }
}
