// The scale subresource: an autoscaling/v1 Scale view of the replicas paths a definition declares.

import { badRequest, invalid, notFound } from '../errors/status-error.js'
import type { ScaleSubresource } from '../schema/types.js'
import type { DecodedObject, ObjectResult, RequestContext } from './types.js'
import type { ResourceCore } from './core.js'
import { objectKey } from './keys.js'
import { metaOf, parseJson, type Obj } from './object-meta.js'
import { updateObject, type UpdateResult } from './update.js'
import { applyObject } from './apply/apply-object.js'

function pathParts (path: string): string[] {
  return path.replace(/^\./, '').split('.').filter(p => p !== '')
}

export function getPath (obj: Obj, path: string): unknown {
  let cur: unknown = obj
  for (const p of pathParts(path)) {
    if (cur === null || typeof cur !== 'object') return undefined
    cur = (cur as Obj)[p]
  }
  return cur
}

function setPath (obj: Obj, path: string, value: unknown): void {
  const parts = pathParts(path)
  let cur = obj
  for (const p of parts.slice(0, -1)) {
    if (cur[p] === null || typeof cur[p] !== 'object') cur[p] = {}
    cur = cur[p] as Obj
  }
  cur[parts[parts.length - 1]] = value
}

/** A LabelSelector object rendered as a selector string (built-ins); strings pass through (CRDs). */
function selectorString (sel: unknown): string | undefined {
  if (typeof sel === 'string') return sel
  if (sel === null || typeof sel !== 'object') return undefined
  const s = sel as { matchLabels?: Record<string, string>, matchExpressions?: Array<{ key: string, operator: string, values?: string[] }> }
  const parts = Object.entries(s.matchLabels ?? {}).map(([k, v]) => `${k}=${v}`)
  for (const e of s.matchExpressions ?? []) {
    const vals = [...(e.values ?? [])].sort().join(',')
    if (e.operator === 'In') parts.push(`${e.key} in (${vals})`)
    else if (e.operator === 'NotIn') parts.push(`${e.key} notin (${vals})`)
    else if (e.operator === 'Exists') parts.push(e.key)
    else if (e.operator === 'DoesNotExist') parts.push(`!${e.key}`)
  }
  return parts.sort().join(',')
}

export function scaleOf (sc: ScaleSubresource, obj: Obj): Obj {
  const m = metaOf(obj)
  const metadata: Obj = { name: m.name }
  if (m.namespace !== undefined) metadata.namespace = m.namespace
  metadata.uid = m.uid
  metadata.resourceVersion = m.resourceVersion
  metadata.creationTimestamp = m.creationTimestamp
  const status: Obj = { replicas: Number(getPath(obj, sc.statusReplicasPath) ?? 0) }
  const selector = sc.labelSelectorPath !== undefined ? selectorString(getPath(obj, sc.labelSelectorPath)) : undefined
  if (selector !== undefined && selector !== '') status.selector = selector
  return { kind: 'Scale', apiVersion: 'autoscaling/v1', metadata, spec: { replicas: Number(getPath(obj, sc.specReplicasPath) ?? 0) }, status }
}

function scaleDef (core: ResourceCore): ScaleSubresource {
  const sc = core.def.subresources.scale
  if (sc === undefined) throw notFound(core.qr, 'scale')
  return sc
}

export async function getScale (core: ResourceCore, namespace: string, name: string): Promise<Buffer> {
  const sc = scaleDef(core)
  const kv = await core.store.get(objectKey(core.def, namespace, name))
  if (kv === undefined) throw notFound(core.qr, name)
  return Buffer.from(JSON.stringify(scaleOf(sc, parseJson(kv.value))))
}

/** PUT .../scale: writes spec.replicas (at the declared path) honouring the Scale's resourceVersion. */
export async function updateScale (core: ResourceCore, ctx: RequestContext, namespace: string, name: string,
  body: DecodedObject): Promise<UpdateResult> {
  const sc = scaleDef(core)
  const scale = body.object as { metadata?: { name?: string, resourceVersion?: string }, spec?: { replicas?: unknown } }
  const replicas = scale.spec?.replicas ?? 0
  if (typeof replicas !== 'number' || !Number.isInteger(replicas)) {
    throw badRequest(`Scale in version "v1" cannot be handled as a Scale: json: cannot unmarshal ${typeof replicas} into Go struct field ScaleSpec.spec.replicas of type int32`)
  }
  if (replicas < 0) {
    // As kube-apiserver's ValidateScale: a 422 about the Scale object.
    throw invalid('autoscaling', 'Scale', scale.metadata?.name ?? '', [{ reason: 'FieldValueInvalid', field: 'spec.replicas', message: `Invalid value: ${replicas}: must be greater than or equal to 0` }])
  }
  const kv = await core.store.get(objectKey(core.def, namespace, name))
  if (kv === undefined) throw notFound(core.qr, name)
  const obj = parseJson(kv.value)
  setPath(obj, sc.specReplicasPath, replicas)
  metaOf(obj).resourceVersion = scale.metadata?.resourceVersion || String(kv.modRevision)
  const res = await updateObject(core, { ...ctx, fieldValidation: 'Ignore' }, namespace, name, { object: obj, duplicateFields: [] }, undefined, { managerSubresource: 'scale' })
  const out: ObjectResult = { bytes: Buffer.alloc(0), object: scaleOf(sc, res.object) }
  out.bytes = Buffer.from(JSON.stringify(out.object))
  return { ...out, created: false }
}

/**
 * Server-side apply of a Scale (autoscaling/v1): its spec.replicas is applied to the object's replicas path, the
 * managed-fields entry recording subresource `scale`, as kube-apiserver's scale handler does.
 */
export async function applyScale (core: ResourceCore, ctx: RequestContext, namespace: string, name: string, config: Obj,
  force: boolean, duplicateFields: string[]): Promise<UpdateResult> {
  const sc = scaleDef(core)
  if (config.apiVersion !== 'autoscaling/v1') {
    throw badRequest(`Incorrect version specified in apply patch. Specified patch version: ${String(config.apiVersion ?? '')}, expected: autoscaling/v1`)
  }
  if (config.kind !== 'Scale') throw badRequest(`Incorrect kind specified in apply patch. Specified patch kind: ${String(config.kind ?? '')}, expected: Scale`)
  const meta = (config.metadata ?? {}) as { name?: string, resourceVersion?: string, managedFields?: unknown }
  if (meta.managedFields !== undefined && meta.managedFields !== null) throw badRequest('metadata.managedFields must be nil')
  const replicas = (config.spec as { replicas?: unknown } | undefined)?.replicas
  if (replicas !== undefined && (typeof replicas !== 'number' || !Number.isInteger(replicas) || replicas < 0)) {
    throw invalid('autoscaling', 'Scale', name, [{ reason: 'FieldValueInvalid', field: 'spec.replicas', message: `Invalid value: ${JSON.stringify(replicas)}: must be greater than or equal to 0` }])
  }
  const parent: Obj = { apiVersion: core.apiVersion, kind: core.def.kind, metadata: { name, ...(meta.resourceVersion !== undefined ? { resourceVersion: meta.resourceVersion } : {}) } }
  if (replicas !== undefined) setPath(parent, sc.specReplicasPath, replicas)
  const res = await applyObject(core, ctx, namespace, name, { config: parent, force, duplicateFields, entrySubresource: 'scale', mustExist: true })
  const view = scaleOf(sc, res.object)
  return { bytes: Buffer.from(JSON.stringify(view)), object: view, created: false }
}
