// validateCRD: the CustomResourceDefinition rules of Kubernetes' apiextensions validation (names, versions, structural schemas).
import * as fe from './field-errors.js'
import { isDNS1035Label, isDNS1123Subdomain } from './metadata.js'
import type { FieldError } from './types.js'

type Obj = Record<string, unknown>
const asObj = (v: unknown): Obj => (v !== null && typeof v === 'object' && !Array.isArray(v) ? v as Obj : {})
const asArr = (v: unknown): unknown[] => (Array.isArray(v) ? v : [])
const str = (v: unknown): string => (typeof v === 'string' ? v : '')
const schemaTypes = ['array', 'boolean', 'integer', 'number', 'object', 'string']
const columnTypes = ['integer', 'number', 'string', 'boolean', 'date']

export function validateCRD (crd: Record<string, unknown>): FieldError[] {
  const errs: FieldError[] = []
  const spec = asObj(crd.spec)
  const names = asObj(spec.names)
  const group = str(spec.group)
  const plural = str(names.plural)
  const name = str(asObj(crd.metadata).name)
  if (name !== `${plural}.${group}`) errs.push(fe.invalid('metadata.name', name, 'must be spec.names.plural+"."+spec.group'))
  if (group === '') errs.push(fe.required('spec.group'))
  else {
    errs.push(...isDNS1123Subdomain(group).map((m) => fe.invalid('spec.group', group, m)))
    if (group.split('.').length < 2) errs.push(fe.invalid('spec.group', group, 'should be a domain with at least one dot'))
  }
  const scope = spec.scope
  if (scope === undefined || scope === '') errs.push(fe.required('spec.scope'))
  else if (scope !== 'Cluster' && scope !== 'Namespaced') errs.push(fe.notSupported('spec.scope', scope, ['Cluster', 'Namespaced']))
  errs.push(...validateNames(names, 'spec.names'))
  errs.push(...validateVersions(spec, 'spec'))
  if (spec.preserveUnknownFields === true) {
    errs.push(fe.invalid('spec.preserveUnknownFields', true, 'cannot set to true, set x-orch-preserve-unknown-fields to true in spec.versions[*].schema instead'))
  }
  return errs
}

function validateNames (names: Obj, path: string): FieldError[] {
  const errs: FieldError[] = []
  const label = (field: string, value: string, prefix = ''): void => {
    const msgs = isDNS1035Label(prefix === '' ? value : value.toLowerCase())
    if (value !== '' && msgs.length > 0) errs.push(fe.invalid(fe.child(path, field), value, prefix + msgs.join(',')))
  }
  const plural = str(names.plural)
  const kind = str(names.kind)
  const listKind = str(names.listKind)
  if (plural === '') errs.push(fe.required(fe.child(path, 'plural')))
  label('plural', plural)
  label('singular', str(names.singular))
  if (kind === '') errs.push(fe.required(fe.child(path, 'kind')))
  label('kind', kind, 'may have mixed case, but should otherwise match: ')
  label('listKind', listKind, 'may have mixed case, but should otherwise match: ')
  if (kind !== '' && kind === listKind) errs.push(fe.invalid(fe.child(path, 'listKind'), listKind, 'kind and listKind may not be the same'))
  asArr(names.shortNames).forEach((s, i) => {
    const msgs = isDNS1035Label(str(s))
    if (msgs.length > 0) errs.push(fe.invalid(fe.index(fe.child(path, 'shortNames'), i), s, msgs.join(',')))
  })
  asArr(names.categories).forEach((c, i) => {
    const msgs = isDNS1035Label(str(c))
    if (msgs.length > 0) errs.push(fe.invalid(fe.index(fe.child(path, 'categories'), i), c, msgs.join(',')))
  })
  return errs
}

function validateVersions (spec: Obj, path: string): FieldError[] {
  const errs: FieldError[] = []
  const versions = asArr(spec.versions)
  const vpath = fe.child(path, 'versions')
  if (versions.length === 0) errs.push(fe.required(vpath, 'must have at least one version'))
  const seen = new Set<string>()
  let storage = 0
  versions.forEach((raw, i) => {
    const v = asObj(raw)
    const p = fe.index(vpath, i)
    const name = str(v.name)
    if (v.storage === true) storage++
    if (name === '') errs.push(fe.required(fe.child(p, 'name')))
    else {
      if (seen.has(name)) errs.push(fe.invalid(fe.child(p, 'name'), name, 'must be unique'))
      errs.push(...isDNS1035Label(name).map((m) => fe.invalid(fe.child(p, 'name'), name, m)))
    }
    seen.add(name)
    const schema = asObj(v.schema).openAPIV3Schema
    const schemaPath = `${p}.schema.openAPIV3Schema`
    if (schema === undefined || schema === null) errs.push(fe.required(schemaPath, 'schemas are required'))
    else errs.push(...validateStructural(schema, schemaPath))
    errs.push(...validateSubresources(asObj(v.subresources), fe.child(p, 'subresources')))
    asArr(v.additionalPrinterColumns).forEach((c, j) => errs.push(...validateColumn(asObj(c), fe.index(fe.child(p, 'additionalPrinterColumns'), j))))
  })
  if (versions.length > 0 && storage !== 1) {
    errs.push(fe.invalid(vpath, versions, 'must have exactly one version marked as storage version'))
  }
  return errs
}

function validateSubresources (sub: Obj, path: string): FieldError[] {
  const errs: FieldError[] = []
  if (sub.scale === undefined || sub.scale === null) return errs
  const scale = asObj(sub.scale)
  const p = fe.child(path, 'scale')
  const check = (field: string, under: string, optional = false): void => {
    const v = scale[field]
    if (v === undefined || v === '') {
      if (!optional) errs.push(fe.required(fe.child(p, field)))
      return
    }
    if (typeof v !== 'string' || !(v === under || v.startsWith(`${under}.`))) {
      errs.push(fe.invalid(fe.child(p, field), v, `should be a json path under ${under}`))
    }
  }
  check('specReplicasPath', '.spec')
  check('statusReplicasPath', '.status')
  check('labelSelectorPath', optionalLabelRoot(scale.labelSelectorPath), true)
  return errs
}

/** labelSelectorPath may sit under .spec or .status. */
function optionalLabelRoot (v: unknown): string {
  return typeof v === 'string' && v.startsWith('.spec') ? '.spec' : '.status'
}

function validateColumn (c: Obj, path: string): FieldError[] {
  const errs: FieldError[] = []
  if (str(c.name) === '') errs.push(fe.required(fe.child(path, 'name')))
  if (str(c.type) === '') errs.push(fe.required(fe.child(path, 'type')))
  else if (!columnTypes.includes(str(c.type))) errs.push(fe.notSupported(fe.child(path, 'type'), c.type, columnTypes))
  if (str(c.jsonPath) === '') errs.push(fe.required(fe.child(path, 'jsonPath')))
  return errs
}

const marker = (node: Obj, name: string): unknown => node[`x-orch-${name}`] ?? node[`x-kubernetes-${name}`]
const markerPath = (node: Obj, path: string, name: string): string =>
  fe.child(path, `x-kubernetes-${name}` in node ? `x-kubernetes-${name}` : `x-orch-${name}`)

/** The structural-schema rules Kubernetes applies to openAPIV3Schema (the main ones). */
export function validateStructural (schema: unknown, path: string): FieldError[] {
  const errs: FieldError[] = []
  const root = asObj(schema)
  if (root.type === undefined || root.type === '') errs.push(fe.required(fe.child(path, 'type'), 'must not be empty at the root'))
  else if (root.type !== 'object') errs.push(fe.invalid(fe.child(path, 'type'), root.type, 'must be object at the root'))
  const meta = asObj(asObj(root.properties).metadata)
  const metaProps = Object.keys(asObj(meta.properties))
  if (metaProps.some((p) => p !== 'name' && p !== 'generateName') || Object.keys(meta).some((k) => !['type', 'properties', 'description'].includes(k))) {
    errs.push(fe.forbidden(`${path}.properties[metadata]`, 'must not specify anything other than name and generateName, but metadata is implicitly specified'))
  }
  walk(root, path, 'root', false, errs)
  return errs
}

type Level = 'root' | 'property' | 'items' | 'additional'

function walk (node: Obj, path: string, level: Level, valueValidation: boolean, errs: FieldError[]): void {
  const type = node.type
  const preserve = marker(node, 'preserve-unknown-fields')
  const intOrString = marker(node, 'int-or-string') === true
  if ('$ref' in node) errs.push(fe.forbidden(fe.child(path, '$ref'), '$ref is not supported'))
  if (valueValidation) {
    if (type !== undefined) errs.push(fe.forbidden(fe.child(path, 'type'), 'must be empty to be structural'))
  } else if (type === undefined || type === '') {
    if (level !== 'root' && preserve !== true && !intOrString) {
      const where = level === 'items' ? 'for specified array items' : level === 'additional' ? 'for specified additionalProperties' : 'for specified object fields'
      errs.push(fe.required(fe.child(path, 'type'), `must not be empty ${where}`))
    }
  } else if (!schemaTypes.includes(String(type))) {
    errs.push(fe.notSupported(fe.child(path, 'type'), type, schemaTypes))
  }
  if (preserve === false) errs.push(fe.invalid(markerPath(node, path, 'preserve-unknown-fields'), false, 'must be true or undefined'))
  if (marker(node, 'embedded-resource') === true && type !== 'object') {
    errs.push(fe.required(fe.child(path, 'type'), 'must be object if x-kubernetes-embedded-resource is true'))
  }
  if (node.properties !== undefined && node.additionalProperties !== undefined && node.additionalProperties !== false) {
    errs.push(fe.forbidden(fe.child(path, 'additionalProperties'), 'additionalProperties and properties are mutual exclusive'))
  }
  if (node.additionalProperties === false) errs.push(fe.forbidden(fe.child(path, 'additionalProperties'), 'additionalProperties cannot be set to false'))
  if (node.uniqueItems === true) errs.push(fe.forbidden(fe.child(path, 'uniqueItems'), 'uniqueItems cannot be set to true since the runtime complexity becomes quadratic'))
  if (type === 'array' && node.items === undefined && !valueValidation) errs.push(fe.required(fe.child(path, 'items'), 'must be specified'))
  if (Array.isArray(node.items)) errs.push(fe.forbidden(fe.child(path, 'items'), 'items must be a schema object and not an array'))
  if (marker(node, 'list-type') === 'map' && asArr(marker(node, 'list-map-keys')).length === 0) {
    errs.push(fe.required(markerPath(node, path, 'list-map-keys'), 'must not be empty if x-kubernetes-list-type is map'))
  }
  for (const [name, sub] of Object.entries(asObj(node.properties))) walk(asObj(sub), `${path}.properties[${name}]`, 'property', valueValidation, errs)
  if (node.items !== undefined && !Array.isArray(node.items)) walk(asObj(node.items), fe.child(path, 'items'), 'items', valueValidation, errs)
  if (typeof node.additionalProperties === 'object') walk(asObj(node.additionalProperties), fe.child(path, 'additionalProperties'), 'additional', valueValidation, errs)
  // An int-or-string node's `anyOf: [{type: integer}, {type: string}]` is the sanctioned exception to typeless value validation.
  for (const key of intOrString ? ['oneOf'] as const : ['allOf', 'anyOf', 'oneOf'] as const) {
    asArr(node[key]).forEach((sub, i) => walk(asObj(sub), fe.index(fe.child(path, key), i), 'property', true, errs))
  }
  if (node.not !== undefined) walk(asObj(node.not), fe.child(path, 'not'), 'property', true, errs)
}
