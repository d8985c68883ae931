// The Kubernetes v1.29 protobuf messages (field numbers from proto/k8s-v1.29/fields.json) and which message a kind is.

import { createRequire } from 'node:module'

export interface FieldInfo { id: number; type: string; repeated?: boolean; keyType?: string }

/**
 * A message's fields by number, and by JSON name. `inline` fields are Go structs embedded with `json:",inline"`: on
 * the wire a nested message, in JSON their members sit in the parent object.
 */
export interface MessageInfo {
  name: string
  byId: Map<number, [string, FieldInfo]>
  byName: Map<string, FieldInfo>
  inline: Set<string>
  /** Set for Kubernetes' types whose JSON form is not their fields (a time string, a quantity, a list of strings, ...). */
  special?: SpecialForm
}

export type SpecialForm = 'time' | 'microtime' | 'duration' | 'quantity' | 'intorstring' | 'rawjson' | 'strings'

const SPECIAL_FORMS: Record<string, SpecialForm> = {
  'k8s.io.apimachinery.pkg.apis.meta.v1.Time': 'time',
  'k8s.io.apimachinery.pkg.apis.meta.v1.MicroTime': 'microtime',
  'k8s.io.apimachinery.pkg.apis.meta.v1.Duration': 'duration',
  'k8s.io.apimachinery.pkg.api.resource.Quantity': 'quantity',
  'k8s.io.apimachinery.pkg.api.resource.QuantityValue': 'quantity',
  'k8s.io.apimachinery.pkg.util.intstr.IntOrString': 'intorstring',
  'k8s.io.apimachinery.pkg.runtime.RawExtension': 'rawjson',
  'k8s.io.apimachinery.pkg.apis.meta.v1.FieldsV1': 'rawjson',
  'k8s.io.apimachinery.pkg.apis.meta.v1.Verbs': 'strings'
}

/** The special JSON form of a message, if it has one (`*.ExtraValue` are lists of strings too). */
export function specialForm (name: string): SpecialForm | undefined {
  return SPECIAL_FORMS[name] ?? (name.endsWith('.ExtraValue') ? 'strings' : undefined)
}

/** Embedded types (Go `json:",inline"`), a fact of the v1.29 API: the field named after its type carries the members. */
const INLINE_TYPES = new Set(['VolumeSource', 'PersistentVolumeSource', 'EphemeralContainerCommon', 'LocalObjectReference',
  'IngressRuleValue', 'Rule', 'RuleWithOperations', 'ProbeHandler'])
/** Proto names whose JSON name is the same capitalized word (all others capitalized in the table are lower-first in JSON). */
const CAPITALIZED_JSON = new Set(['k8s.io.api.core.v1.DaemonEndpoint.Port', 'k8s.io.apimachinery.pkg.apis.meta.v1.FieldsV1.Raw'])

/** Proto names that differ from their JSON name otherwise (Go's `APIGroup` became `aPIGroup` in generated.proto). */
const RENAMED_JSON: Readonly<Record<string, string>> = { aPIGroup: 'apiGroup' }

function jsonName (message: string, field: string): string {
  if (RENAMED_JSON[field] !== undefined) return RENAMED_JSON[field]
  if (!/^[A-Z]/.test(field) || CAPITALIZED_JSON.has(`${message}.${field}`)) return field
  return field[0].toLowerCase() + field.slice(1)
}

function isInline (field: string, spec: FieldInfo): boolean {
  const short = spec.type.slice(spec.type.lastIndexOf('.') + 1)
  if (!INLINE_TYPES.has(short) || spec.repeated === true || spec.keyType !== undefined) return false
  return field === short[0].toLowerCase() + short.slice(1) || (short === 'ProbeHandler' && field === 'handler')
}

type FieldTable = Record<string, Record<string, FieldInfo>>
const require = createRequire(import.meta.url)
/**
 * The field table (400 kB of JSON, some 0.6 MiB of heap once parsed), read on the first protobuf request rather than at
 * start-up: most clients speak JSON, so an idle server need not hold it. Node's module cache keeps the one parsed copy.
 */
function fieldTable (): FieldTable {
  return require('../../../proto/k8s-v1.29/fields.json') as FieldTable
}

export const META = 'k8s.io.apimachinery.pkg.apis.meta.v1'
export const UNKNOWN = 'k8s.io.apimachinery.pkg.runtime.Unknown'

/** The protobuf envelope's 4-byte prefix: `k8s\0`. */
export const ENVELOPE_PREFIX = Buffer.from([0x6b, 0x38, 0x73, 0x00])

/** Message lookups over the field table, built once per process user (no module-level state). */
export class Messages {
  private readonly cache = new Map<string, MessageInfo>()

  get (name: string): MessageInfo | undefined {
    const hit = this.cache.get(name)
    if (hit !== undefined) return hit
    const f = fieldTable()[name]
    if (f === undefined) return undefined
    const info: MessageInfo = { name, byId: new Map(), byName: new Map(), inline: new Set(), special: specialForm(name) }
    for (const [protoName, spec] of Object.entries(f)) {
      const field = jsonName(name, protoName)
      info.byId.set(spec.id, [field, spec])
      info.byName.set(field, spec)
      if (isInline(field, spec)) info.inline.add(field)
    }
    this.cache.set(name, info)
    return info
  }
}

/**
 * The message of a kind at an apiVersion: `v1` is core, `apps/v1` is `k8s.io.api.apps.v1`, a group's first label
 * names its package (`coordination.orch.io/v1` and `coordination.k8s.io/v1` are `k8s.io.api.coordination.v1`);
 * meta.k8s.io kinds (DeleteOptions, Status, ...) live in apimachinery. Undefined when there is none.
 */
export function messageName (apiVersion: string, kind: string): string | undefined {
  const slash = apiVersion.indexOf('/')
  const group = slash < 0 ? '' : apiVersion.slice(0, slash)
  const version = slash < 0 ? apiVersion : apiVersion.slice(slash + 1)
  const candidates = group === ''
    ? [`k8s.io.api.core.v1.${kind}`, `${META}.${kind}`]
    : group.startsWith('meta.')
      ? [`${META}.${kind}`]
      : [`k8s.io.api.${packageOf(group)}.${version}.${kind}`]
  const table = fieldTable()
  return candidates.find(c => table[c] !== undefined)
}

/** The package of a group: its first label, except `internal.apiserver.*` (StorageVersion), whose package is apiserverinternal. */
function packageOf (group: string): string {
  return group.startsWith('internal.apiserver.') ? 'apiserverinternal' : group.slice(0, group.indexOf('.') < 0 ? group.length : group.indexOf('.'))
}
