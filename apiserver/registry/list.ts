// LIST: the resourceVersion table of spec 4.6, paging with continue tokens, selectors applied while scanning.
// Without selectors items are the stored bytes, never parsed.

import { badRequest } from '../errors/status-error.js'
import { isStorageError } from '../storage/store.js'
import type { ListQuery, ListResult } from './types.js'
import { parseResourceVersion, servedBytes, waitForRevision, type ResourceCore } from './core.js'
import { toStatusError, type StorageOp } from './storage-errors.js'
import { keyAfter, namespacePrefix, resourcePrefix } from './keys.js'
import { compileSelector, singleNameFromFieldSelector, type Selector } from './selectors.js'
import { continueExpired, decodeContinue, encodeContinue } from './continue-token.js'
import { parseJson } from './object-meta.js'
import { STREAM_CHUNK, joinedPage, streamList } from './list-stream.js'
import { selectorIndexTerms } from './selector-index.js'

interface ReadPlan {
  /** undefined = the current revision. */
  revision?: number
  /** Without revision: any snapshot at or after this one will do (resourceVersion "0", NotOlderThan); a watch cache may answer. */
  notOlderThan?: number
  startKey?: string
  issuedAt: number
  op: StorageOp
  /** For continue requests: the token's start key (relative), to hand out a fresh token if its revision is gone. */
  continueFrom?: string
  /** For continue requests: the keys from `startKey` on, as the previous chunk counted them (not counted again). */
  remaining?: number
}

/** Resolves the query into the revision and start key to read at (spec 4.6 table); 400 on invalid combinations. */
export async function planList (core: ResourceCore, namespace: string, q: ListQuery): Promise<ReadPlan> {
  const rv = parseResourceVersion(q.resourceVersion)
  const match = q.resourceVersionMatch
  const now = core.clock.now()
  if (match !== undefined && match !== 'Exact' && match !== 'NotOlderThan') {
    throw badRequest(`resourceVersionMatch: Unsupported value: "${String(match)}": supported values: "Exact", "NotOlderThan"`)
  }
  if (match !== undefined && rv === undefined) throw badRequest('resourceVersionMatch is forbidden unless resourceVersion is provided')
  if (q.continue !== undefined && q.continue !== '') {
    if (match !== undefined) throw badRequest('resourceVersionMatch is forbidden when continue is provided')
    if (rv !== undefined && rv !== 0) throw badRequest('specifying resource version is not allowed when using continue')
    const pos = decodeContinue(q.continue, now)
    const startKey = resourcePrefix(core.def) + pos.start
    if (!startKey.startsWith(namespacePrefix(core.def, namespace))) throw badRequest('continue key is not valid: key is outside the requested namespace')
    // An inconsistent continuation (rv -1) reads at the newest revision; its next tokens carry that revision.
    return { revision: pos.rv === -1 ? undefined : pos.rv, startKey, issuedAt: pos.issuedAt, op: 'continue', continueFrom: pos.start, remaining: pos.remaining }
  }
  const limited = q.limit !== undefined && q.limit > 0
  if (match === 'Exact') {
    if (rv === 0) throw badRequest('resourceVersionMatch "Exact" is forbidden for resourceVersion "0"')
    await waitForRevision(core, rv as number)
    return { revision: rv, issuedAt: now, op: 'list' }
  }
  if (rv === undefined) return { issuedAt: now, op: 'list' }
  if (rv === 0) return { issuedAt: now, op: 'list', notOlderThan: 0 }
  await waitForRevision(core, rv)
  // A limited list reads its first page at the version given (unset match and NotOlderThan alike), so a version
  // older than the retained history answers 410 and the client retries with a newer one (spec §4.6).
  if (limited) return { revision: rv, issuedAt: now, op: 'list' }
  return { issuedAt: now, op: 'list', notOlderThan: rv }
}

/** LIST of one namespace ('' = all), as spec 2.3 and 4.6 describe. */
export async function listObjects (core: ResourceCore, namespace: string, q: ListQuery): Promise<ListResult> {
  const plan = await planList(core, namespace, q)
  const selector = q.labelSelector || q.fieldSelector ? compileSelector(q.labelSelector, q.fieldSelector, core.fields) : undefined
  const prefix = scanPrefix(core, namespace, q.fieldSelector)
  if (plan.startKey !== undefined && !plan.startKey.startsWith(prefix)) throw badRequest('continue key is not valid: key does not match the request')
  const limit = q.limit !== undefined && q.limit > 0 ? Math.floor(q.limit) : 0
  try {
    const selecting = selector !== undefined && !selector.empty ? selector : undefined
    const index = selecting === undefined ? undefined : selectorIndexTerms(resourcePrefix(core.def), selecting)
    if (q.stream !== undefined && limit === 0) return await streamList(core, prefix, { ...plan, index }, q.stream.separator, STREAM_CHUNK, selecting)
    if (selecting !== undefined) return await listSelected(core, prefix, plan, limit, selecting, index)
    return q.stream === undefined ? await listPlain(core, prefix, plan, limit) : await listPlainJoined(core, prefix, plan, limit, q.stream.separator)
  } catch (err) {
    if (plan.continueFrom !== undefined && isStorageError(err, 'Compacted')) throw continueExpired(plan.continueFrom, core.clock.now())
    throw toStatusError(err, { resource: core.qr, op: plan.op, requested: plan.revision })
  }
}

function token (core: ResourceCore, revision: number, lastKey: string, plan: ReadPlan, remaining?: number): string {
  const start = keyAfter(lastKey).slice(resourcePrefix(core.def).length)
  return encodeContinue({ rv: revision, start, issuedAt: plan.issuedAt, remaining })
}

/**
 * One page. The keys after it are counted once, on the first page; its token carries the count, so each later page
 * at the same revision subtracts its items instead of counting the rest again (a walk stays linear in the keys).
 */
async function listPlain (core: ResourceCore, prefix: string, plan: ReadPlan, limit: number): Promise<ListResult> {
  const known = plan.revision !== undefined ? plan.remaining : undefined
  const res = await core.store.list(prefix, { revision: plan.revision, startKey: plan.startKey, limit, notOlderThan: plan.notOlderThan, noCount: known !== undefined })
  const items = res.items.map(kv => servedBytes(core, kv.value))
  const out: ListResult = { items, resourceVersion: String(res.revision), continue: '' }
  if (limit > 0 && res.remaining > 0 && res.items.length > 0) {
    const remaining = known !== undefined ? Math.max(1, known - res.items.length) : res.remaining
    out.continue = token(core, res.revision, res.items[res.items.length - 1].key, plan, remaining)
    out.remainingItemCount = remaining
  }
  return out
}

/**
 * `listPlain` for a caller that takes the page joined: the store joins it (no KeyValue per item) and stops at the
 * first key past it; the keys after the page come from the token, or are counted once at the page's revision.
 */
async function listPlainJoined (core: ResourceCore, prefix: string, plan: ReadPlan, limit: number, separator: Buffer): Promise<ListResult> {
  const page = await joinedPage(core, prefix, { revision: plan.revision, startKey: plan.startKey, limit, notOlderThan: plan.notOlderThan, noCount: true }, separator)
  const out: ListResult = { items: [], joined: page.bytes, resourceVersion: String(page.revision), continue: '' }
  if (page.remaining > 0 && page.lastKey !== undefined) {
    const known = plan.revision !== undefined ? plan.remaining : undefined
    const remaining = known !== undefined ? Math.max(1, known - page.count) : await countAfter(core, prefix, page.revision, page.lastKey)
    out.continue = token(core, page.revision, page.lastKey, plan, remaining)
    out.remainingItemCount = remaining
  }
  return out
}

/** Keys under `prefix` after `lastKey` at `revision` (a page's remainingItemCount). */
async function countAfter (core: ResourceCore, prefix: string, revision: number, lastKey: string): Promise<number> {
  const next = await core.store.list(prefix, { revision, startKey: keyAfter(lastKey), limit: 1 })
  return Math.max(1, next.items.length + next.remaining)
}

const SCAN_PAGE = 500

/** Scans the keys under `prefix` (those having one of the `index` terms when the store keeps an index), checking each. */
async function listSelected (core: ResourceCore, prefix: string, plan: ReadPlan, limit: number, selector: Selector, index: string[] | undefined): Promise<ListResult> {
  const items: Buffer[] = []
  let revision = plan.revision
  let startKey = plan.startKey
  const page = limit > 0 ? Math.max(limit, SCAN_PAGE) : SCAN_PAGE
  // A scan that starts at the current state (not at a client's revision or continue token) may page through the
  // snapshot of a watch cache; one at a given revision reads the store, and so does a consistent one the client
  // limits (kube-apiserver v1.29 sends limited LISTs other than resourceVersion "0" to etcd).
  const scan = plan.revision === undefined && plan.startKey === undefined && (limit === 0 || plan.notOlderThan !== undefined)
  for (;;) {
    const res = await core.store.list(prefix, { revision, startKey, limit: page, scan, notOlderThan: revision === undefined ? plan.notOlderThan : undefined, index })
    revision = res.revision
    for (let i = 0; i < res.items.length; i++) {
      const kv = res.items[i]
      if (!selector.matches(parseJson(kv.value))) continue
      items.push(servedBytes(core, kv.value))
      if (limit > 0 && items.length === limit) {
        const more = i < res.items.length - 1 || res.remaining > 0
        return { items, resourceVersion: String(revision), continue: more ? token(core, revision, kv.key, plan) : '' }
      }
    }
    if (res.remaining === 0 || res.items.length === 0) break
    startKey = keyAfter(res.items[res.items.length - 1].key)
  }
  return { items, resourceVersion: String(revision ?? core.store.currentRevision()), continue: '' }
}

/**
 * Key prefix to scan. A `metadata.name=x` field selector within one namespace (or cluster scope) narrows
 * the scan to keys starting with the name; the selector still checks the exact name.
 */
export function scanPrefix (core: ResourceCore, namespace: string, fieldSelector: string | undefined): string {
  const prefix = namespacePrefix(core.def, namespace)
  const name = singleNameFromFieldSelector(fieldSelector)
  return name !== undefined && (namespace !== '' || !core.def.namespaced) && !name.includes('/') ? prefix + name : prefix
}
