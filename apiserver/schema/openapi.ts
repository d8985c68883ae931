// OpenAPI documents built from ResourceDefinitions: /openapi/v2 (swagger 2) and /openapi/v3 (per group-version), as kubectl reads them.
//
// What kubectl needs (v1.29): `explain` finds the GVK on an operation of the resource's path
// (`x-kubernetes-group-version-kind` object) and then the component schema whose
// `x-kubernetes-group-version-kind` list contains it; server-side field validation is used when the
// PATCH operation of the kind lists a `fieldValidation` query parameter; apply reads strategic-merge
// markers from v2 under their Kubernetes spelling. So every `x-orch-*` marker is also published as
// `x-kubernetes-*`. Schema names are orch's (explain goes by GVK, not by name).
import { createHash } from 'node:crypto'
import { derivedDefinitionClosure, sharedDefinitionNames } from './builtin/catalog.js'
import type { ResourceDefinition, StructuralSchema } from './types.js'

type Obj = Record<string, unknown>
type Flavor = 'v2' | 'v3'
const meta = 'io.orch.apimachinery.pkg.apis.meta.v1.'
const gvkOf = (d: Pick<ResourceDefinition, 'group' | 'version'>, kind: string): Obj => ({ group: d.group, kind, version: d.version })

/** The component/definition name of a kind: orch's derived name for built-ins, reversed group for custom kinds. */
export function schemaName (d: Pick<ResourceDefinition, 'group' | 'version' | 'custom'>, kind: string): string {
  if (d.custom !== undefined) return [...d.group.split('.').reverse(), d.version, kind].join('.')
  if (d.group === 'apiextensions.orch.io') return `io.orch.apiextensions-apiserver.pkg.apis.apiextensions.${d.version}.${kind}`
  return `io.orch.api.${d.group === '' ? 'core' : d.group.split('.')[0]}.${d.version}.${kind}`
}

/** A schema node as published: refs to the document, markers in both spellings, structural forms kubectl understands. */
export function publishSchema (node: StructuralSchema, flavor: Flavor): Obj {
  const prefix = flavor === 'v2' ? '#/definitions/' : '#/components/schemas/'
  const { $ref, ...rest } = node as StructuralSchema & Obj
  const out: Obj = {}
  for (const [k, v] of Object.entries(rest)) {
    if (flavor === 'v2' && (k === 'nullable' || k === 'anyOf' || k === 'oneOf' || k === 'not')) continue // not swagger 2
    else if (k === 'properties') out.properties = Object.fromEntries(Object.entries(v as Record<string, StructuralSchema>).map(([n, s]) => [n, publishSchema(s, flavor)]))
    else if (k === 'items' || k === 'not') out[k] = publishSchema(v as StructuralSchema, flavor)
    else if (k === 'additionalProperties') out[k] = typeof v === 'boolean' ? v : publishSchema(v as StructuralSchema, flavor)
    else if (k === 'allOf' || k === 'anyOf' || k === 'oneOf') out[k] = (v as StructuralSchema[]).map((s) => publishSchema(s, flavor))
    else {
      out[k] = v
      if (k.startsWith('x-orch-')) out[`x-kubernetes-${k.slice('x-orch-'.length)}`] = v
    }
  }
  if (rest['x-orch-int-or-string'] === true && rest.type === undefined && (rest.anyOf === undefined || flavor === 'v2')) {
    // Published as Kubernetes does: IntOrString is a string of format int-or-string, Quantity a plain string.
    out.type = 'string'
    if (rest.format === 'quantity') {
      delete out.format
      delete out['x-orch-int-or-string']
      delete out['x-kubernetes-int-or-string']
    } else out.format = 'int-or-string'
  }
  if ($ref === undefined) return out
  const ref = { $ref: prefix + $ref }
  if (Object.keys(out).length === 0 || flavor === 'v2') return ref
  return { allOf: [ref], ...out }
}

function kindSchema (d: ResourceDefinition, flavor: Flavor): Obj {
  const gvk = [gvkOf(d, d.kind)]
  const s = publishSchema(d.schema, flavor)
  if (s.description === undefined) s.description = `${d.kind} (${d.group === '' ? 'core' : d.group}/${d.version}).`
  return { ...s, 'x-kubernetes-group-version-kind': gvk, 'x-orch-group-version-kind': gvk }
}

function listSchema (d: ResourceDefinition, flavor: Flavor): Obj {
  const prefix = flavor === 'v2' ? '#/definitions/' : '#/components/schemas/'
  const gvk = [gvkOf(d, d.listKind)]
  return {
    description: `A list of ${d.kind} objects.`,
    type: 'object',
    required: ['items'],
    properties: {
      apiVersion: { type: 'string' },
      items: { type: 'array', items: { $ref: prefix + schemaName(d, d.kind) } },
      kind: { type: 'string' },
      metadata: { $ref: `${prefix}${meta}ListMeta` },
    },
    'x-kubernetes-group-version-kind': gvk,
    'x-orch-group-version-kind': gvk,
  }
}

/** Every schema a set of kinds needs, named for the document. */
function collectSchemas (defs: ResourceDefinition[], flavor: Flavor): Record<string, Obj> {
  const out: Record<string, Obj> = {}
  const shared = derivedDefinitionClosure([...sharedDefinitionNames, `${meta}Patch`])
  for (const [name, s] of Object.entries(shared)) out[name] = withKubernetesGVK(publishSchema(s, flavor))
  for (const d of defs) {
    for (const [name, s] of Object.entries(d.definitions)) out[name] ??= withKubernetesGVK(publishSchema(s, flavor))
    out[schemaName(d, d.kind)] = kindSchema(d, flavor)
    if (d.virtual !== true) out[schemaName(d, d.listKind)] = listSchema(d, flavor)
  }
  return out
}

function withKubernetesGVK (s: Obj): Obj {
  const gvk = s['x-orch-group-version-kind']
  return gvk === undefined ? s : { ...s, 'x-kubernetes-group-version-kind': gvk }
}

interface Op { method: 'get' | 'post' | 'put' | 'patch' | 'delete'; action: string; kind: string; schema: string; writes: boolean; query?: string[] }

/** The REST paths of one kind and the operations on each (Kubernetes' layout). */
function kindPaths (d: ResourceDefinition): Array<{ path: string; params: string[]; ops: Op[] }> {
  const base = d.group === '' ? `/api/${d.version}` : `/apis/${d.group}/${d.version}`
  const coll = d.namespaced ? `${base}/namespaces/{namespace}/${d.plural}` : `${base}/${d.plural}`
  const scope = d.namespaced ? ['namespace'] : []
  const kindRef = schemaName(d, d.kind)
  const listRef = schemaName(d, d.listKind)
  const listQuery = ['labelSelector', 'fieldSelector', 'limit', 'continue', 'resourceVersion', 'resourceVersionMatch', 'watch', 'timeoutSeconds', 'allowWatchBookmarks', 'sendInitialEvents']
  const writeQuery = ['dryRun', 'fieldManager', 'fieldValidation']
  const op = (method: Op['method'], action: string, kind: string, schema: string, query: string[] = []): Op =>
    ({ method, action, kind, schema, writes: method !== 'get' && method !== 'delete', query })
  // A create-only resource (a review) has only POST on its collection, as kube-apiserver publishes it.
  if (d.virtual === true) return [{ path: coll, params: scope, ops: [op('post', 'post', d.kind, kindRef, writeQuery)] }]
  const paths = [
    { path: coll, params: scope, ops: [op('get', 'list', d.kind, listRef, listQuery), op('post', 'post', d.kind, kindRef, writeQuery), op('delete', 'deletecollection', d.kind, `${meta}Status`, ['dryRun', 'gracePeriodSeconds', 'propagationPolicy', ...listQuery.slice(0, 6)])] },
    { path: `${coll}/{name}`, params: [...scope, 'name'], ops: [op('get', 'get', d.kind, kindRef), op('put', 'put', d.kind, kindRef, writeQuery), op('patch', 'patch', d.kind, kindRef, [...writeQuery, 'force']), op('delete', 'delete', d.kind, `${meta}Status`, ['dryRun', 'gracePeriodSeconds', 'propagationPolicy'])] },
  ]
  if (d.namespaced) paths.push({ path: `${base}/${d.plural}`, params: [], ops: [op('get', 'list', d.kind, listRef, listQuery)] })
  if (d.subresources.status === true) {
    paths.push({ path: `${coll}/{name}/status`, params: [...scope, 'name'], ops: [op('get', 'get', d.kind, kindRef), op('put', 'put', d.kind, kindRef, writeQuery), op('patch', 'patch', d.kind, kindRef, [...writeQuery, 'force'])] })
  }
  if (d.subresources.approval === true) {
    paths.push({ path: `${coll}/{name}/approval`, params: [...scope, 'name'], ops: [op('get', 'get', d.kind, kindRef), op('put', 'put', d.kind, kindRef, writeQuery), op('patch', 'patch', d.kind, kindRef, [...writeQuery, 'force'])] })
  }
  if (d.subresources.scale !== undefined) {
    const scale = 'io.orch.api.autoscaling.v1.Scale'
    const scaleOp = (m: Op['method'], a: string, q: string[] = []): Op => ({ ...op(m, a, 'Scale', scale, q), kind: 'Scale' })
    paths.push({ path: `${coll}/{name}/scale`, params: [...scope, 'name'], ops: [scaleOp('get', 'get'), scaleOp('put', 'put', writeQuery), scaleOp('patch', 'patch', [...writeQuery, 'force'])] })
  }
  return paths
}

const opId = (d: ResourceDefinition, o: Op, path: string): string =>
  `${o.action}${d.group === '' ? 'Core' : d.group.split('.')[0]}${d.version}${path.includes('{namespace}') ? 'Namespaced' : ''}${o.kind}${path.endsWith('/status') ? 'Status' : path.endsWith('/scale') ? 'Scale' : path.endsWith('/approval') ? 'Approval' : ''}`

function buildPaths (defs: ResourceDefinition[], flavor: Flavor): Record<string, Obj> {
  const prefix = flavor === 'v2' ? '#/definitions/' : '#/components/schemas/'
  const param = (name: string, where: 'path' | 'query'): Obj => flavor === 'v2'
    ? { name, in: where, type: 'string', uniqueItems: true, ...(where === 'path' ? { required: true } : {}) }
    : { name, in: where, schema: { type: 'string', uniqueItems: true }, ...(where === 'path' ? { required: true } : {}) }
  const out: Record<string, Obj> = {}
  for (const d of defs) {
    for (const p of kindPaths(d)) {
      const entry: Obj = { parameters: p.params.map((n) => param(n, 'path')) }
      for (const o of p.ops) {
        const gvk = o.kind === 'Scale' ? { group: 'autoscaling', kind: 'Scale', version: 'v1' } : gvkOf(d, o.kind)
        const ref = { $ref: prefix + o.schema }
        const operation: Obj = {
          operationId: opId(d, o, p.path),
          parameters: (o.query ?? []).map((n) => param(n, 'query')),
          responses: flavor === 'v2'
            ? { 200: { description: 'OK', schema: ref } }
            : { 200: { description: 'OK', content: { 'application/json': { schema: ref } } } },
          'x-kubernetes-action': o.action,
          'x-kubernetes-group-version-kind': gvk,
        }
        if (o.writes) {
          const body = o.method === 'patch' ? { $ref: `${prefix}${meta}Patch` } : ref
          if (flavor === 'v2') (operation.parameters as Obj[]).unshift({ name: 'body', in: 'body', required: true, schema: body })
          else operation.requestBody = { required: true, content: requestTypes(o.method, d.custom !== undefined).reduce<Obj>((acc, t) => ({ ...acc, [t]: { schema: body } }), {}) }
        }
        entry[o.method] = operation
      }
      out[p.path] = entry
    }
  }
  return out
}

/** Patch types per kind: custom resources have no strategic merge patch (kubectl then sends a merge patch). */
function requestTypes (method: Op['method'], custom: boolean): string[] {
  if (method !== 'patch') return ['application/json', 'application/yaml']
  return custom
    ? ['application/json-patch+json', 'application/merge-patch+json', 'application/apply-patch+yaml']
    : ['application/json-patch+json', 'application/merge-patch+json', 'application/strategic-merge-patch+json', 'application/apply-patch+yaml']
}

const info = { title: 'Orch', version: 'v1.29.0' }

/** The swagger 2.0 document served at /openapi/v2. */
export function buildOpenAPIv2 (defs: ResourceDefinition[]): object {
  return { swagger: '2.0', info, paths: buildPaths(defs, 'v2'), definitions: collectSchemas(defs, 'v2') }
}

/** The OpenAPI 3.0 document of one group-version (/openapi/v3/api/v1, /openapi/v3/apis/apps/v1, ...). */
export function buildOpenAPIv3GroupVersion (defs: ResourceDefinition[], group: string, version: string): object {
  const mine = defs.filter((d) => d.group === group && d.version === version)
  return { openapi: '3.0.0', info, paths: buildPaths(mine, 'v3'), components: { schemas: collectSchemas(mine, 'v3') } }
}

/** The key of a group-version in /openapi/v3 (`api/v1`, `apis/apps/v1`). */
export function groupVersionPath (group: string, version: string): string {
  return group === '' ? `api/${version}` : `apis/${group}/${version}`
}

/** Content hash of a document as Kubernetes writes it into serverRelativeURL (uppercase hex SHA-512). */
export function documentHash (doc: object): string {
  return createHash('sha512').update(JSON.stringify(doc)).digest('hex').toUpperCase()
}

/** The /openapi/v3 discovery document: one entry per served group-version, URL carrying the document hash. */
export function buildOpenAPIv3Paths (defs: ResourceDefinition[]): { paths: Record<string, { serverRelativeURL: string }> } {
  const gvs = new Map<string, { group: string; version: string }>()
  for (const d of defs) gvs.set(groupVersionPath(d.group, d.version), { group: d.group, version: d.version })
  const paths: Record<string, { serverRelativeURL: string }> = {}
  for (const key of [...gvs.keys()].sort()) {
    const { group, version } = gvs.get(key) as { group: string; version: string }
    const hash = documentHash(buildOpenAPIv3GroupVersion(defs, group, version))
    paths[key] = { serverRelativeURL: `/openapi/v3/${key}?hash=${hash}` }
  }
  return { paths }
}
