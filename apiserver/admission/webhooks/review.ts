// The AdmissionReview an admission webhook is sent, and what its answer means (denial, patch, warnings, audit annotations).

import { StatusError, type StatusReason } from '../../errors/status-error.js'
import type { WriteAttributes } from '../../registry/admission.js'
import { applyJsonPatch, decodeJsonPatch } from '../../registry/patch/json-patch.js'
import type { Json } from '../../registry/patch/json-pointer.js'
import type { RequestTarget } from './matching.js'

export type AdmissionRequest = Record<string, unknown>

const OPTIONS_KIND = { CREATE: 'CreateOptions', UPDATE: 'UpdateOptions', DELETE: 'DeleteOptions' } as const

/** The `request` of an AdmissionReview for the write `a` as the webhook's matched target `t` sees it. */
export function admissionRequest (uid: string, a: WriteAttributes, t: RequestTarget): AdmissionRequest {
  const d = a.definition
  const u = a.ctx.user
  // A connect has no operation options (kube-apiserver sends none); its options object is `object`.
  let options: Record<string, unknown> | null = null
  if (a.operation !== 'CONNECT') {
    options = { apiVersion: 'meta.k8s.io/v1', kind: OPTIONS_KIND[a.operation] }
    if (a.ctx.dryRun) options.dryRun = ['All']
    if (a.ctx.fieldManager !== undefined && a.operation !== 'DELETE') options.fieldManager = a.ctx.fieldManager
  }
  const req: AdmissionRequest = {
    uid,
    kind: { group: t.group, version: t.version, kind: t.kind },
    resource: { group: t.group, version: t.version, resource: t.resource },
    requestKind: { group: d.group, version: d.version, kind: d.kind },
    requestResource: { group: d.group, version: d.version, resource: d.plural },
    name: a.name,
    namespace: a.namespace,
    operation: a.operation,
    userInfo: { username: u.username, ...(u.uid !== undefined ? { uid: u.uid } : {}), groups: u.groups, ...(u.extra !== undefined ? { extra: u.extra } : {}) },
    // DELETE carries the stored object as oldObject only, as Kubernetes sends it.
    object: a.operation === 'DELETE' ? null : a.object,
    oldObject: a.operation === 'DELETE' ? a.object : (a.oldObject ?? null),
    dryRun: a.ctx.dryRun,
    ...(options !== null ? { options } : {})
  }
  if (a.subresource !== '') { req.subResource = a.subresource; req.requestSubResource = a.subresource }
  return req
}

export function admissionReview (versions: string[], request: AdmissionRequest): Record<string, unknown> {
  const version = versions.includes('v1') ? 'v1' : 'v1beta1'
  return { apiVersion: `admission.k8s.io/${version}`, kind: 'AdmissionReview', request }
}

export interface AdmissionResponse {
  uid?: string
  allowed?: boolean
  /** The Status of a refusal (Go's `Result`, whose JSON name is `status`). */
  status?: { code?: number; message?: string; reason?: string }
  patch?: string
  patchType?: string
  warnings?: string[]
  auditAnnotations?: Record<string, string>
}

/** The `response` of an answer, checked as Kubernetes does (it must answer the request's uid). */
export function admissionResponse (answer: unknown, uid: string): AdmissionResponse {
  const r = (answer as { response?: AdmissionResponse } | null)?.response
  if (r === undefined || r === null || typeof r !== 'object') throw new Error('received invalid webhook response: response is nil')
  if (r.uid !== uid) throw new Error(`expected response.uid="${uid}", got "${String(r.uid ?? '')}"`)
  return r
}

/** Kubernetes' ToStatusErr: the webhook's code (403 when none) and its message after `admission webhook "x" denied the request`. */
export function denial (webhook: string, r: AdmissionResponse): StatusError {
  const deniedBy = `admission webhook "${webhook}" denied the request`
  const res = r.status ?? {}
  const message = (res.message ?? '') !== '' ? `${deniedBy}: ${res.message!}` : (res.reason ?? '') !== '' ? `${deniedBy}: ${res.reason!}` : `${deniedBy} without explanation`
  const code = typeof res.code === 'number' && res.code !== 0 ? res.code : 403
  return new StatusError(code, (res.reason ?? '') as StatusReason, message)
}

/** Warnings to the client and audit annotations (keys prefixed with the webhook's name). */
export function recordSideChannels (webhook: string, r: AdmissionResponse, a: WriteAttributes): void {
  for (const w of r.warnings ?? []) if (typeof w === 'string' && w !== '') a.ctx.warnings.push(w)
  const annotations = Object.entries(r.auditAnnotations ?? {})
  if (annotations.length === 0) return
  a.ctx.auditAnnotations ??= {}
  for (const [k, v] of annotations) a.ctx.auditAnnotations[`${webhook}/${k}`] = String(v)
}

/** Applies a mutating webhook's JSONPatch to `a.object` in place; true when it changed the object. */
export function applyResponsePatch (r: AdmissionResponse, a: WriteAttributes): boolean {
  if (r.patch === undefined || r.patch === '') return false
  if (r.patchType !== 'JSONPatch') throw new Error(`unsupported patch type "${String(r.patchType ?? '')}"`)
  const ops = decodeJsonPatch(JSON.parse(Buffer.from(r.patch, 'base64').toString('utf8')))
  const patched = applyJsonPatch(a.object as Json, ops)
  if (patched === null || typeof patched !== 'object' || Array.isArray(patched)) throw new Error('the patched object is not an object')
  const before = JSON.stringify(a.object)
  for (const k of Object.keys(a.object)) delete a.object[k]
  Object.assign(a.object, patched)
  return JSON.stringify(a.object) !== before
}
