// CustomResourceDefinitions: turning one into ResourceDefinitions (one per served version) and validating it as Kubernetes does.
//
// CRD schemas may spell markers `x-kubernetes-*` (as written for Kubernetes) or `x-orch-*`; both are
// normalised to `x-orch-*`. The object's `metadata` is always ObjectMeta (a schema's own constraints on
// metadata are kept as an `allOf` beside it); `apiVersion` and `kind` are always declared.
import { derivedDefinitionClosure } from './builtin/catalog.js'
export { validateCRD, validateStructural } from './crd-validation.js'
import type { PrinterColumn, ResourceDefinition, ScaleSubresource, StructuralSchema } from './types.js'

type Obj = Record<string, unknown>
const objectMetaName = 'io.orch.apimachinery.pkg.apis.meta.v1.ObjectMeta'
const allVerbs = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch']

const asObj = (v: unknown): Obj => (v !== null && typeof v === 'object' && !Array.isArray(v) ? v as Obj : {})
const asArr = (v: unknown): unknown[] => (Array.isArray(v) ? v : [])
const str = (v: unknown): string => (typeof v === 'string' ? v : '')

/** A copy of a CRD schema with `x-kubernetes-*` markers renamed to `x-orch-*` (property names untouched). */
export function normaliseSchema (node: unknown): StructuralSchema {
  const src = asObj(node)
  const out: Obj = {}
  for (const [k, v] of Object.entries(src)) {
    const key = k.startsWith('x-kubernetes-') ? `x-orch-${k.slice('x-kubernetes-'.length)}` : k
    if (key === 'properties') {
      out.properties = Object.fromEntries(Object.entries(asObj(v)).map(([n, s]) => [n, normaliseSchema(s)]))
    } else if (key === 'items') out.items = Array.isArray(v) ? v.map(normaliseSchema) : normaliseSchema(v)
    else if (key === 'additionalProperties') out[key] = typeof v === 'boolean' ? v : normaliseSchema(v)
    else if (key === 'not') out[key] = normaliseSchema(v)
    else if (key === 'allOf' || key === 'anyOf' || key === 'oneOf') out[key] = asArr(v).map(normaliseSchema)
    else out[key] = structuredClone(v)
  }
  return out as StructuralSchema
}

function rootSchema (openAPIV3Schema: unknown): StructuralSchema {
  const root = normaliseSchema(openAPIV3Schema)
  const props = { ...(root.properties ?? {}) }
  const userMeta = props.metadata
  const meta: StructuralSchema = { $ref: objectMetaName }
  if (userMeta !== undefined) {
    const { type: _t, ...constraints } = userMeta
    if (Object.keys(constraints).length > 0) meta.allOf = [constraints]
  }
  props.metadata = meta
  props.apiVersion ??= { type: 'string' }
  props.kind ??= { type: 'string' }
  return { ...root, type: 'object', properties: props }
}

function printerColumns (version: Obj): PrinterColumn[] {
  return asArr(version.additionalPrinterColumns).map((raw) => {
    const c = asObj(raw)
    const col: PrinterColumn = { name: str(c.name), type: str(c.type) as PrinterColumn['type'], jsonPath: str(c.jsonPath) }
    if (typeof c.format === 'string') col.format = c.format
    if (typeof c.description === 'string') col.description = c.description
    if (typeof c.priority === 'number' && c.priority !== 0) col.priority = c.priority
    return col
  })
}

function scaleOf (version: Obj): ScaleSubresource | undefined {
  const scale = asObj(version.subresources).scale
  if (scale === undefined || scale === null) return undefined
  const s = asObj(scale)
  const out: ScaleSubresource = { specReplicasPath: str(s.specReplicasPath), statusReplicasPath: str(s.statusReplicasPath) }
  if (typeof s.labelSelectorPath === 'string') out.labelSelectorPath = s.labelSelectorPath
  return out
}

/** One ResourceDefinition per served version (call validateCRD first; this assumes a valid CRD). */
export function definitionsFromCRD (crd: Record<string, unknown>): ResourceDefinition[] {
  const spec = asObj(crd.spec)
  const names = asObj(spec.names)
  const kind = str(names.kind)
  const versions = asArr(spec.versions).map(asObj)
  const storage = versions.find((v) => v.storage === true)
  const crdName = str(asObj(crd.metadata).name)
  return versions.filter((v) => v.served === true).map((v) => {
    const openAPIV3Schema = asObj(asObj(v.schema).openAPIV3Schema)
    const schema = rootSchema(openAPIV3Schema)
    const subresources: ResourceDefinition['subresources'] = {}
    const sub = asObj(v.subresources)
    if (sub.status !== undefined && sub.status !== null) subresources.status = true
    const scale = scaleOf(v)
    if (scale !== undefined) subresources.scale = scale
    const deprecated = v.deprecated === true
      ? { warning: str(v.deprecationWarning) || `${str(spec.group)}/${str(v.name)} ${kind} is deprecated` }
      : undefined
    return {
      ...(deprecated === undefined ? {} : { deprecated }),
      group: str(spec.group),
      version: str(v.name),
      kind,
      listKind: str(names.listKind) || `${kind}List`,
      plural: str(names.plural),
      singular: str(names.singular) || kind.toLowerCase(),
      shortNames: asArr(names.shortNames).map(str),
      categories: asArr(names.categories).map(str),
      namespaced: spec.scope !== 'Cluster',
      verbs: [...allVerbs],
      subresources,
      schema,
      definitions: derivedDefinitionClosure([objectMetaName]),
      printerColumns: printerColumns(v),
      storageVersion: str(storage?.name),
      allowCreateOnUpdate: false,
      nameValidation: 'subdomain',
      custom: { crdName, preserveUnknownFieldsAtRoot: schema['x-orch-preserve-unknown-fields'] === true },
    }
  })
}
