// WATCH entry: query rules (spec 4.6/4.8), initial synthetic ADDED events and the initial-events-end bookmark, then the hub.

import { badRequest, invalid, resourceVersionTooOld } from '../errors/status-error.js'
import type { WatchEncoder, WatchQuery, WatchSink, WatchSubscription } from './types.js'
import { parseResourceVersion, servedBytes, waitForRevision, type ResourceCore } from './core.js'
import { namespacePrefix, objectKey, resourcePrefix } from './keys.js'
import { compileSelector } from './selectors.js'
import { selectorIndexTerms } from './selector-index.js'
import { parseJson } from './object-meta.js'
import { toStatusError } from './storage-errors.js'
import { scanPrefix } from './list.js'
import { addedEvent, bookmarkEvent } from './watch-events.js'
import type { WatchHub, WatcherSpec } from './watch-hub.js'

function checkQuery (core: ResourceCore, q: WatchQuery): void {
  if (q.sendInitialEvents !== undefined && core.watchList !== true) {
    throw invalid('meta.orch.io', 'ListOptions', '', [{ reason: 'FieldValueForbidden', field: 'sendInitialEvents', message: 'Forbidden: sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled' }])
  }
  if (q.sendInitialEvents === true) {
    if (q.resourceVersionMatch !== 'NotOlderThan') throw badRequest('sendInitialEvents requires setting resourceVersionMatch to NotOlderThan')
    if (q.allowWatchBookmarks !== true) throw badRequest('sendInitialEvents requires setting allowWatchBookmarks to true')
  } else if (q.resourceVersionMatch !== undefined && q.sendInitialEvents === undefined) {
    throw badRequest('resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided')
  } else if (q.resourceVersionMatch !== undefined && q.resourceVersionMatch !== 'NotOlderThan') {
    throw badRequest(`resourceVersionMatch: Unsupported value: "${q.resourceVersionMatch}": supported values: "NotOlderThan"`)
  }
}

/** Starts a watch of one namespace ('' = all) or, with `q.name`, of one object. */
export async function watchObjects (core: ResourceCore, hub: WatchHub, namespace: string, q: WatchQuery,
  encoder: WatchEncoder, sink: WatchSink): Promise<WatchSubscription> {
  checkQuery(core, q)
  const rv = parseResourceVersion(q.resourceVersion)
  const selector = q.labelSelector || q.fieldSelector ? compileSelector(q.labelSelector, q.fieldSelector, core.fields) : undefined
  const spec: WatcherSpec = {
    keyPrefix: namespacePrefix(core.def, namespace),
    key: q.name !== undefined && q.name !== '' ? objectKey(core.def, namespace, q.name) : undefined,
    selector: selector?.empty === true ? undefined : selector,
    encoder,
    sink,
    allowBookmarks: q.allowWatchBookmarks === true
  }
  const initial = q.sendInitialEvents ?? (rv === undefined || rv === 0)
  if (!initial) {
    const from = rv === undefined || rv === 0 ? core.store.currentRevision() : rv
    if (from > 0 && from < core.store.compactedRevision()) {
      throw resourceVersionTooOld(`too old resource version: ${from} (${core.store.compactedRevision()})`)
    }
    await waitForRevision(core, from)
    return hub.subscribe(spec, from)
  }
  if (rv !== undefined && rv > 0) await waitForRevision(core, rv)
  hub.ensureStarted()
  const { chunks, revision } = await initialEvents(core, spec, scanPrefix(core, namespace, q.fieldSelector))
  if (q.sendInitialEvents === true && spec.allowBookmarks) {
    chunks.push(bookmarkEvent(core.apiVersion, core.def.kind, revision, core.upstreamAliases === true ? 'both' : 'orch').encode(encoder))
  }
  return hub.subscribe(spec, revision, chunks)
}

async function initialEvents (core: ResourceCore, spec: WatcherSpec, prefix: string): Promise<{ chunks: Buffer[], revision: number }> {
  const chunks: Buffer[] = []
  try {
    if (spec.key !== undefined) {
      const revision = core.store.currentRevision()
      const kv = await core.store.get(spec.key, { revision })
      if (kv !== undefined && (spec.selector === undefined || spec.selector.matches(parseJson(kv.value)))) {
        chunks.push(addedEvent(servedBytes(core, kv.value), kv.modRevision, kv.key).encode(spec.encoder))
      }
      return { chunks, revision }
    }
    const index = spec.selector === undefined ? undefined : selectorIndexTerms(resourcePrefix(core.def), spec.selector)
    const res = await core.store.list(prefix, { index })
    for (const kv of res.items) {
      if (spec.selector !== undefined && !spec.selector.matches(parseJson(kv.value))) continue
      chunks.push(addedEvent(servedBytes(core, kv.value), kv.modRevision, kv.key).encode(spec.encoder))
    }
    return { chunks, revision: res.revision }
  } catch (err) {
    throw toStatusError(err, { resource: core.qr, op: 'list' })
  }
}
