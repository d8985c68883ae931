// Sample objects of a kind, filled from its schema where the protobuf message has the field: what the round-trip
// test and the benchmark encode. Also reports schema fields the message lacks (they cannot travel in protobuf).

import { resolverFor, type SchemaResolver } from '../../schema/resolve.js'
import type { ResourceDefinition, StructuralSchema } from '../../schema/types.js'
import { apiVersionOf } from '../decode.js'
import { isStringList } from './encode.js'
import { META, Messages, messageName, type FieldInfo, type MessageInfo } from './messages.js'

type Obj = Record<string, unknown>

const SPECIAL: Record<string, unknown> = {
  [`${META}.Time`]: '2024-01-02T03:04:05Z',
  [`${META}.MicroTime`]: '2024-01-02T03:04:05.123456Z',
  [`${META}.Duration`]: '1m30s',
  'k8s.io.apimachinery.pkg.api.resource.Quantity': '250m',
  'k8s.io.apimachinery.pkg.api.resource.QuantityValue': '1Gi',
  'k8s.io.apimachinery.pkg.util.intstr.IntOrString': '25%',
  'k8s.io.apimachinery.pkg.runtime.RawExtension': { apiVersion: 'v1', kind: 'ConfigMap', data: { a: 'b' } },
  [`${META}.FieldsV1`]: { 'f:metadata': { 'f:labels': {} } }
}

export interface Sample { object: Obj; schemaOnly: string[] }

/** A full object of `def`'s kind; undefined when the kind has no message. Nesting stops at `maxDepth`. */
export function sampleObject (def: ResourceDefinition, messages: Messages, maxDepth = 8): Sample | undefined {
  const apiVersion = apiVersionOf(def)
  const name = messageName(apiVersion, def.kind)
  if (name === undefined) return undefined
  const schemaOnly: string[] = []
  const body = fill(resolverFor(def), def.schema, name, messages, '', maxDepth, schemaOnly) as Obj
  return { object: { apiVersion, kind: def.kind, ...body }, schemaOnly }
}

function fill (r: SchemaResolver, node: StructuralSchema, name: string, messages: Messages, path: string, depth: number, schemaOnly: string[]): unknown {
  if (name in SPECIAL) return SPECIAL[name]
  if (isStringList(name)) return ['one', 'two']
  const info = messages.get(name)
  const schema = r.resolve(node)
  if (info === undefined || depth <= 0) return {}
  const out: Obj = {}
  for (const [field, sub] of Object.entries(schema.properties ?? {})) {
    if (field === 'apiVersion' || field === 'kind') continue
    const spec = info.byName.get(field) ?? inlineField(info, field, messages)
    if (spec === undefined) { schemaOnly.push(`${name}.${field}`); continue }
    const at = `${path}.${field}`
    const one = (s: StructuralSchema | undefined): unknown => scalarOrMessage(r, s ?? {}, spec.type, messages, at, depth - 1, schemaOnly)
    if (spec.keyType !== undefined) out[field] = { key1: one(r.resolve(sub).additionalProperties as StructuralSchema | undefined) }
    else if (spec.repeated === true) out[field] = [one(r.resolve(sub).items)]
    else out[field] = one(sub)
  }
  return out
}

function scalarOrMessage (r: SchemaResolver, node: StructuralSchema, type: string, messages: Messages, path: string, depth: number, schemaOnly: string[]): unknown {
  const s = typeof node === 'object' ? r.resolve(node) : {}
  switch (type) {
    case 'string': return Array.isArray(s.enum) && typeof s.enum[0] === 'string' ? s.enum[0] : `v${path}`
    case 'bool': return true
    case 'int32': case 'int64': return 3
    case 'bytes': return Buffer.from(path).toString('base64')
  }
  return fill(r, s, type, messages, path, depth, schemaOnly)
}

/** A member of an embedded (inline) struct, found in the embedded message's table. */
function inlineField (info: MessageInfo, field: string, messages: Messages): FieldInfo | undefined {
  for (const f of info.inline) {
    const inner = messages.get(info.byName.get(f)?.type ?? '')
    const spec = inner?.byName.get(field) ?? (inner === undefined ? undefined : inlineField(inner, field, messages))
    if (spec !== undefined) return spec
  }
  return undefined
}
