// Structural defaulting from schema `default`s, as CRDs do: a default fills an absent field whose parent object exists.
//
// Defaults are copied (never shared) and then themselves defaulted, so a defaulted object gets its
// nested defaults too. A null counts as absent for built-in kinds (Go decodes null as the zero value)
// and, for custom kinds, where the node is not nullable (Kubernetes prunes such nulls before defaulting).
import { resolverFor, type SchemaResolver } from './resolve.js'
import type { ResourceDefinition, StructuralSchema } from './types.js'

export function applyDefaults (def: ResourceDefinition, obj: unknown): void {
  const r = resolverFor(def)
  let plans = plansByResolver.get(r)
  if (plans === undefined) plansByResolver.set(r, plans = new WeakMap())
  defaultNode({ r, plans, builtin: def.custom === undefined }, obj, def.schema)
}

/** A property of an object node that has a default. */
interface DefaultedProperty { name: string, value: unknown, nullable: boolean }

interface Walk {
  r: SchemaResolver
  /** Per resolved object node: its properties that carry defaults (most nodes have none). */
  plans: WeakMap<StructuralSchema, DefaultedProperty[]>
  builtin: boolean
}

/**
 * Pure caches, held weakly by the resolver of one definitions map (itself made once per map): defaulting runs on every
 * write, and looking through every declared property of every node for a default dominated its cost.
 */
const plansByResolver = new WeakMap<SchemaResolver, WeakMap<StructuralSchema, DefaultedProperty[]>>()

function defaultedProperties (w: Walk, s: StructuralSchema): DefaultedProperty[] {
  let plan = w.plans.get(s)
  if (plan !== undefined) return plan
  plan = []
  for (const name in s.properties ?? {}) {
    const prop = w.r.resolve((s.properties as Record<string, StructuralSchema>)[name])
    if (prop.default !== undefined) plan.push({ name, value: prop.default, nullable: prop.nullable === true })
  }
  w.plans.set(s, plan)
  return plan
}

function defaultNode (w: Walk, value: unknown, node: StructuralSchema): void {
  if (value === null || typeof value !== 'object') return
  const s = w.r.resolve(node)
  if (Array.isArray(value)) {
    if (s.items !== undefined) for (const item of value) defaultNode(w, item, s.items)
    return
  }
  const obj = value as Record<string, unknown>
  for (const d of defaultedProperties(w, s)) {
    const current = obj[d.name]
    if (current === undefined || (current === null && (w.builtin || !d.nullable))) obj[d.name] = structuredClone(d.value)
  }
  const props = s.properties
  const extra = typeof s.additionalProperties === 'object' ? s.additionalProperties : undefined
  if (props === undefined && extra === undefined) return
  for (const name in obj) {
    const prop = props?.[name]
    if (prop !== undefined) defaultNode(w, obj[name], prop)
    else if (extra !== undefined) defaultNode(w, obj[name], extra)
  }
}
