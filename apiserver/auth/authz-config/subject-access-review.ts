// SubjectAccessReview bodies a webhook authorizer sends (v1 or v1beta1) and the status it reads back.

import type { Attributes } from '../types.js'

/** The v1 SubjectAccessReviewSpec, fields omitted when empty as Go's `omitempty` does (what match conditions see as `request`). */
export interface SarSpec {
  resourceAttributes?: Record<string, string>
  nonResourceAttributes?: { path?: string; verb?: string }
  user?: string
  groups?: string[]
  extra?: Record<string, string[]>
  uid?: string
}

export interface SarStatus { allowed: boolean; denied: boolean; reason: string; evaluationError: string }

const nonEmpty = (o: Record<string, string>): Record<string, string> => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== ''))

export function sarSpec (a: Attributes): SarSpec {
  const spec: SarSpec = {}
  if (a.resourceRequest) {
    spec.resourceAttributes = nonEmpty({ namespace: a.namespace, verb: a.verb, group: a.apiGroup, version: a.apiVersion, resource: a.resource, subresource: a.subresource, name: a.name })
  } else {
    spec.nonResourceAttributes = nonEmpty({ path: a.path, verb: a.verb })
  }
  if (a.user.username !== '') spec.user = a.user.username
  if (a.user.groups.length > 0) spec.groups = [...a.user.groups]
  if (a.user.extra !== undefined && Object.keys(a.user.extra).length > 0) spec.extra = a.user.extra
  if (a.user.uid !== undefined && a.user.uid !== '') spec.uid = a.user.uid
  return spec
}

/** The request body for `version` (v1beta1 names the groups field `group`). */
export function sarBody (spec: SarSpec, version: string): Record<string, unknown> {
  const { groups, ...rest } = spec
  const body = version === 'v1beta1' ? { ...rest, ...(groups !== undefined ? { group: groups } : {}) } : spec
  return { apiVersion: `authorization.k8s.io/${version}`, kind: 'SubjectAccessReview', metadata: { creationTimestamp: null }, spec: body, status: { allowed: false } }
}

/** The status of a webhook's answer; throws when the answer is not a SubjectAccessReview of the version sent. */
export function sarStatus (answer: unknown, version: string): SarStatus {
  if (answer === null || typeof answer !== 'object') throw new Error('the webhook answered something other than an object')
  const a = answer as { apiVersion?: unknown; kind?: unknown; status?: Record<string, unknown> }
  const versions = [`authorization.k8s.io/${version}`, `authorization.orch.io/${version}`]
  if (a.kind !== 'SubjectAccessReview' || typeof a.apiVersion !== 'string' || !versions.includes(a.apiVersion)) {
    throw new Error(`the webhook answered kind ${JSON.stringify(a.kind)} of version ${JSON.stringify(a.apiVersion)}, not SubjectAccessReview of authorization.k8s.io/${version}`)
  }
  const s = a.status ?? {}
  const bool = (k: string): boolean => {
    if (s[k] === undefined) return false
    if (typeof s[k] !== 'boolean') throw new Error(`status.${k} of the webhook's answer is not a boolean`)
    return s[k] as boolean
  }
  const str = (k: string): string => typeof s[k] === 'string' ? s[k] as string : ''
  return { allowed: bool('allowed'), denied: bool('denied'), reason: str('reason'), evaluationError: str('evaluationError') }
}
