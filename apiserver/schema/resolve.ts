// Walking structural schemas: following `$ref` into a definition's `definitions`, child lookups, path lookups.
import type { ResourceDefinition, SchemaDefinitions, StructuralSchema } from './types.js'

/** A `$ref` naming no entry of `definitions`: a bug in a catalog entry or a CRD conversion. */
export class SchemaRefError extends Error {
  readonly code = 'SCHEMA_ERR_UNRESOLVED_REF'
  constructor (readonly ref: string) {
    super(`schema reference ${JSON.stringify(ref)} names no definition`)
    this.name = 'SchemaRefError'
  }
}

/**
 * Resolves schema nodes against one definitions map. A `$ref` with sibling keywords resolves to the
 * target with the siblings laid over it (so an overlay can add a default beside a `$ref`). Results are
 * cached per node, so repeated walks of one kind cost a map lookup; create one per definition (or share
 * one across calls for the same definition).
 */
export interface SchemaResolver {
  /** The node with every `$ref` followed; the same object for the same input. */
  resolve (node: StructuralSchema): StructuralSchema
  /** The schema of property `name` of an object node, from `properties` or `additionalProperties`. */
  property (node: StructuralSchema, name: string): StructuralSchema | undefined
  /** The item schema of an array node. */
  items (node: StructuralSchema): StructuralSchema | undefined
}

export function createResolver (definitions: SchemaDefinitions): SchemaResolver {
  const cache = new WeakMap<StructuralSchema, StructuralSchema>()

  function resolve (node: StructuralSchema): StructuralSchema {
    if (node.$ref === undefined) return node
    const hit = cache.get(node)
    if (hit !== undefined) return hit
    const seen = new Set<string>()
    let target: StructuralSchema = node
    while (target.$ref !== undefined) {
      const ref = target.$ref
      if (seen.has(ref)) throw new SchemaRefError(ref)
      seen.add(ref)
      const next = definitions[ref]
      if (next === undefined) throw new SchemaRefError(ref)
      target = next
    }
    const { $ref: _ref, ...siblings } = node
    const out = Object.keys(siblings).length === 0 ? target : { ...target, ...siblings }
    cache.set(node, out)
    return out
  }

  function property (node: StructuralSchema, name: string): StructuralSchema | undefined {
    const s = resolve(node)
    const p = s.properties?.[name]
    if (p !== undefined) return resolve(p)
    if (typeof s.additionalProperties === 'object') return resolve(s.additionalProperties)
    return undefined
  }

  function items (node: StructuralSchema): StructuralSchema | undefined {
    const s = resolve(node)
    return s.items === undefined ? undefined : resolve(s.items)
  }

  return { resolve, property, items }
}

/**
 * The resolver of a definitions map, made once per map: every write walks its kind's schema several times (defaults,
 * pruning, validation), and a fresh resolver would follow and copy each `$ref` again on each walk. A pure cache
 * (definitions are never changed once a kind is built; a CRD update builds new ones), held weakly by the map.
 */
const resolvers = new WeakMap<SchemaDefinitions, SchemaResolver>()

/** A resolver for a definition's own schema graph (shared by every walk of that graph). */
export function resolverFor (def: Pick<ResourceDefinition, 'definitions'>): SchemaResolver {
  let r = resolvers.get(def.definitions)
  if (r === undefined) resolvers.set(def.definitions, r = createResolver(def.definitions))
  return r
}

/**
 * The schema at a field path (`['spec', 'containers', '*', 'name']`; `*` or a number steps into array
 * items), or undefined when the schema does not declare it.
 */
export function schemaAtPath (def: Pick<ResourceDefinition, 'schema' | 'definitions'>, path: Array<string | number>,
  resolver: SchemaResolver = resolverFor(def)): StructuralSchema | undefined {
  let node: StructuralSchema | undefined = resolver.resolve(def.schema)
  for (const step of path) {
    if (node === undefined) return undefined
    if (typeof step === 'number' || step === '*' || node.type === 'array') {
      node = node.type === 'array' ? resolver.items(node) : undefined
    } else node = resolver.property(node, step)
  }
  return node
}

/** Every `$ref` reachable from the definition's schema that names no definition (empty when sound). */
export function unresolvedRefs (def: Pick<ResourceDefinition, 'schema' | 'definitions'>): string[] {
  const missing = new Set<string>()
  const visited = new Set<StructuralSchema>()
  const visit = (node: StructuralSchema | boolean | undefined): void => {
    if (node === undefined || typeof node === 'boolean' || visited.has(node)) return
    visited.add(node)
    if (node.$ref !== undefined) {
      const target = def.definitions[node.$ref]
      if (target === undefined) missing.add(node.$ref)
      else visit(target)
    }
    for (const child of childNodes(node)) visit(child)
  }
  visit(def.schema)
  return [...missing].sort()
}

/** The direct sub-schemas of a node (not following `$ref`). */
export function childNodes (node: StructuralSchema): StructuralSchema[] {
  const out: StructuralSchema[] = []
  if (node.properties !== undefined) out.push(...Object.values(node.properties))
  if (typeof node.additionalProperties === 'object') out.push(node.additionalProperties)
  if (node.items !== undefined) out.push(node.items)
  if (node.not !== undefined) out.push(node.not)
  for (const list of [node.allOf, node.anyOf, node.oneOf]) if (list !== undefined) out.push(...list)
  return out
}

/** Names of the definitions reachable from `root` through `$ref`, transitively (for building a kind's map). */
export function referencedDefinitions (root: StructuralSchema, definitions: SchemaDefinitions): string[] {
  const names = new Set<string>()
  const visited = new Set<StructuralSchema>()
  const visit = (node: StructuralSchema): void => {
    if (visited.has(node)) return
    visited.add(node)
    if (node.$ref !== undefined && !names.has(node.$ref)) {
      names.add(node.$ref)
      const target = definitions[node.$ref]
      if (target === undefined) throw new SchemaRefError(node.$ref)
      visit(target)
    }
    for (const child of childNodes(node)) visit(child)
  }
  visit(root)
  return [...names].sort()
}
