// The per-resource context the generic store's parts share: definition, store, strategy, clock and revision waits.

import type { Store } from '../storage/store.js'
import type { ResourceDefinition } from '../schema/types.js'
import { badRequest, tooLargeResourceVersion, type QualifiedResource } from '../errors/status-error.js'
import { METADATA_FIELDS, type FieldGetter } from './selectors.js'
import { metaOf, parseJson } from './object-meta.js'
import type { Strategy } from './strategy.js'
import { FieldManager } from './apply/field-manager.js'
import { mergeTypeOf } from './apply/schema-types.js'
import { RecentNoopApplies } from './apply/recent-noops.js'
import { RevisionManagers } from './apply/revision-managers.js'
import type { MutatingAdmission, WriteAdmission } from './admission.js'
import { conversionOf, type Conversion } from './conversions/index.js'
import type { Obj } from './object-meta.js'

export interface Clock { now(): number }
export const systemClock: Clock = { now: () => Date.now() }

export interface Logger {
  info(obj: unknown, msg?: string): void
  warn(obj: unknown, msg?: string): void
  error(obj: unknown, msg?: string): void
  debug(obj: unknown, msg?: string): void
}

export interface ResourceCore {
  def: ResourceDefinition
  store: Store
  strategy: Strategy
  clock: Clock
  logger: Logger
  qr: QualifiedResource
  /** apiVersion of the served version, and of the stored bytes. */
  apiVersion: string
  storedApiVersion: string
  /** Converts an object between the served and the stored version (registry/conversions/). */
  convert: Conversion
  fields: Record<string, FieldGetter>
  /** Longest wait for the store to reach a requested revision before 504. */
  revisionWaitMs: number
  /** Checks a namespace accepts new objects (exists, not terminating); undefined = no check. */
  admitNamespace?: (namespace: string, name: string) => Promise<void>
  /** Checks on who writes (escalation prevention, NodeRestriction); undefined = none. Internal writes skip them. */
  admission?: WriteAdmission
  /** Mutating admission: after defaulting and the strategy, before validation. */
  mutating?: MutatingAdmission
  /** Records managed fields on every write and performs server-side apply. */
  fieldManager: FieldManager
  /** Applies found to change nothing, so their repeats skip the merge. */
  noopApplies: RecentNoopApplies
  /** The managers of the revisions server-side applies last stored, so the next apply to one skips decoding them. */
  revisionManagers: RevisionManagers
  /** The WatchList feature gate: watches may ask for sendInitialEvents (alpha in v1.29, off by default). */
  watchList?: boolean
  /** The upstream group names are served too: the initial-events-end bookmark carries Kubernetes' annotation as well. */
  upstreamAliases?: boolean
}

export function makeCore (p: Omit<ResourceCore, 'qr' | 'apiVersion' | 'storedApiVersion' | 'convert' | 'fields' | 'fieldManager' | 'noopApplies' | 'revisionManagers'>): ResourceCore {
  const gv = (v: string): string => p.def.group === '' ? v : `${p.def.group}/${v}`
  const storageGroup = p.def.storageGroup ?? p.def.group
  return {
    ...p,
    noopApplies: new RecentNoopApplies(),
    revisionManagers: new RevisionManagers(),
    fieldManager: new FieldManager({
      type: mergeTypeOf(p.def),
      apiVersion: gv(p.def.version),
      statusSubresource: p.def.subresources.status === true,
      now: () => new Date(p.clock.now())
    }),
    qr: { group: p.def.group, resource: p.def.plural },
    apiVersion: gv(p.def.version),
    storedApiVersion: storageGroup === '' ? p.def.storageVersion : `${storageGroup}/${p.def.storageVersion}`,
    convert: conversionOf(p.def),
    fields: { ...METADATA_FIELDS, ...(p.strategy.fieldLabels ?? {}) }
  }
}

/** Parses a resourceVersion query value: undefined for unset/'' , 0 for "0"; 400 when not a number. */
export function parseResourceVersion (rv: string | undefined): number | undefined {
  if (rv === undefined || rv === '') return undefined
  if (!/^\d+$/.test(rv) || !Number.isSafeInteger(Number(rv))) {
    throw badRequest(`invalid resource version: "${rv}"`)
  }
  return Number(rv)
}

/** Waits (polling) until the store has reached `rev`, at most `revisionWaitMs`, then 504 Too large resource version. */
export async function waitForRevision (core: ResourceCore, rev: number): Promise<void> {
  if (core.store.currentRevision() >= rev) return
  const deadline = Date.now() + core.revisionWaitMs
  let delay = 5
  while (Date.now() < deadline) {
    await new Promise(resolve => setTimeout(resolve, delay))
    if (core.store.currentRevision() >= rev) return
    delay = Math.min(delay * 2, 100)
  }
  throw tooLargeResourceVersion(rev, core.store.currentRevision())
}

/** Bytes as served at this handler's version (stored bytes untouched unless the version differs). */
export function servedBytes (core: ResourceCore, bytes: Buffer): Buffer {
  if (core.apiVersion === core.storedApiVersion) return bytes
  return Buffer.from(JSON.stringify(core.convert(parseJson(bytes), core.apiVersion)))
}

/** A stored object as served at this handler's version (the same object when the versions agree). */
export function servedObject (core: ResourceCore, stored: Obj): Obj {
  return core.apiVersion === core.storedApiVersion ? stored : core.convert(stored, core.apiVersion)
}

/** A served object in the stored version (the same object when the versions agree). */
export function storedObject (core: ResourceCore, served: Obj): Obj {
  return core.apiVersion === core.storedApiVersion ? served : core.convert(served, core.storedApiVersion)
}

/** A result whose parsed object is made only when asked for. */
export function lazyResult<T extends object> (bytes: Buffer, extra?: T): { bytes: Buffer, object: Record<string, unknown> } & T {
  let parsed: Record<string, unknown> | undefined
  const out = { bytes, ...(extra ?? {}) } as { bytes: Buffer, object: Record<string, unknown> } & T
  Object.defineProperty(out, 'object', { enumerable: true, get: () => (parsed ??= parseJson(bytes)) })
  return out
}

/** Name of the stored object (for messages), tolerating odd shapes. */
export function nameOf (obj: Record<string, unknown>): string {
  return metaOf(obj).name ?? ''
}

/** The manager a non-apply write is recorded under: `fieldManager`, else the User-Agent's product token (Kubernetes' rule). */
export function managerOf (ctx: { fieldManager?: string, userAgent?: string }): string {
  if (ctx.fieldManager !== undefined && ctx.fieldManager !== '') return ctx.fieldManager
  return (ctx.userAgent ?? '').split('/')[0].slice(0, 128)
}
