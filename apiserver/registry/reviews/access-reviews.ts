// SubjectAccessReview, SelfSubjectAccessReview and LocalSubjectAccessReview (authorization.orch.io/v1): may this user do this?

import { badRequest, invalid, type StatusCause } from '../../errors/status-error.js'
import { nonResourceAttributes, resourceAttributes, type Attributes, type Authorizer, type UserInfo } from '../../auth/types.js'
import type { Obj } from '../object-meta.js'
import type { Review } from './virtual-resource.js'

type Kind = 'SubjectAccessReview' | 'SelfSubjectAccessReview' | 'LocalSubjectAccessReview'

const isSet = (v: unknown): boolean => v !== undefined && v !== null
const str = (v: unknown): string => typeof v === 'string' ? v : ''
const quoted = (v: unknown): string => isSet(v) ? JSON.stringify(v) : '"null"'

function cause (field: string, value: unknown, why: string): StatusCause {
  return { reason: 'FieldValueInvalid', field, message: `Invalid value: ${quoted(value)}: ${why}` }
}

/** Whether metadata holds nothing but `allowed` keys (a zero creationTimestamp and empty collections count as unset). */
function metaEmptyExcept (meta: Obj, allowed: string[]): boolean {
  return Object.entries(meta).every(([k, v]) => allowed.includes(k) || k === 'managedFields' || !isSet(v) || v === '' || v === 0 ||
    (typeof v === 'object' && Object.keys(v as object).length === 0))
}

/** kube-apiserver's ValidateSubjectAccessReview, ValidateSelfSubjectAccessReview and ValidateLocalSubjectAccessReview. */
export function accessReviewErrors (kind: Kind, obj: Obj): StatusCause[] {
  const spec = (obj.spec ?? {}) as Obj
  const meta = (obj.metadata ?? {}) as Obj
  const errs: StatusCause[] = []
  if (isSet(spec.resourceAttributes) && isSet(spec.nonResourceAttributes)) {
    errs.push(cause('spec.nonResourceAttributes', spec.nonResourceAttributes, 'cannot be specified in combination with resourceAttributes'))
  }
  if (!isSet(spec.resourceAttributes) && !isSet(spec.nonResourceAttributes)) {
    errs.push(cause('spec.resourceAttributes', spec.nonResourceAttributes, 'exactly one of nonResourceAttributes or resourceAttributes must be specified'))
  }
  if (kind !== 'SelfSubjectAccessReview' && str(spec.user) === '' && !(Array.isArray(spec.groups) && spec.groups.length > 0)) {
    errs.push(cause('spec.user', str(spec.user), 'at least one of user or group must be specified'))
  }
  if (kind === 'LocalSubjectAccessReview') {
    if (!metaEmptyExcept(meta, ['namespace'])) errs.push(cause('metadata', meta, 'must be empty except for namespace'))
    const ra = spec.resourceAttributes as Obj | undefined | null
    if (isSet(ra) && str(ra?.namespace) !== str(meta.namespace)) {
      errs.push(cause('spec.resourceAttributes.namespace', str(ra?.namespace), 'must match metadata.namespace'))
    }
    if (isSet(spec.nonResourceAttributes)) errs.push(cause('spec.nonResourceAttributes', spec.nonResourceAttributes, 'disallowed on this kind of request'))
  } else if (!metaEmptyExcept(meta, [])) {
    errs.push(cause('metadata', meta, 'must be empty'))
  }
  return errs
}

/** The authorizer's attributes for a review's spec (an empty version matches all versions), as Kubernetes' authorization util. */
export function reviewAttributes (user: UserInfo, spec: Obj): Attributes {
  const ra = spec.resourceAttributes as Obj | undefined | null
  if (isSet(ra)) {
    const r = ra as Obj
    return resourceAttributes(user, {
      verb: str(r.verb), apiGroup: str(r.group), apiVersion: str(r.version) === '' ? '*' : str(r.version),
      resource: str(r.resource), subresource: str(r.subresource), namespace: str(r.namespace), name: str(r.name)
    })
  }
  const nr = (spec.nonResourceAttributes ?? {}) as Obj
  return nonResourceAttributes(user, str(nr.verb), str(nr.path))
}

/** The user a SubjectAccessReview asks about (spec.user, groups, uid, extra). */
function subjectOf (spec: Obj): UserInfo {
  const user: UserInfo = { username: str(spec.user), groups: Array.isArray(spec.groups) ? spec.groups.map(String) : [] }
  if (str(spec.uid) !== '') user.uid = str(spec.uid)
  if (spec.extra !== null && typeof spec.extra === 'object') user.extra = structuredClone(spec.extra) as Record<string, string[]>
  return user
}

/** status: allowed always; denied, reason and evaluationError only when set (Go's omitempty). */
async function decide (authorizer: Authorizer, attrs: Attributes): Promise<Obj> {
  try {
    const r = await authorizer.authorize(attrs)
    const status: Obj = { allowed: r.decision === 'allow' }
    if (r.decision === 'deny') status.denied = true
    if (r.reason !== '') status.reason = r.reason
    return status
  } catch (err) {
    return { allowed: false, evaluationError: err instanceof Error ? err.message : String(err) }
  }
}

/**
 * The review of `kind`: SubjectAccessReview asks about spec.user/groups, SelfSubjectAccessReview about the
 * requesting user, LocalSubjectAccessReview about spec.user/groups within the namespace of the URL.
 */
export function accessReview (kind: Kind, group: string, authorizer: Authorizer): Review {
  return async (ctx, namespace, obj) => {
    const errs = accessReviewErrors(kind, obj)
    if (errs.length > 0) throw invalid(group, kind, '', errs)
    const spec = obj.spec as Obj
    if (kind === 'LocalSubjectAccessReview') {
      if (namespace === '') throw badRequest(`namespace is required on this type: ${namespace}`)
      if (str((obj.metadata as Obj | undefined)?.namespace) !== namespace) throw badRequest(`spec.resourceAttributes.namespace must match namespace: ${namespace}`)
    }
    const user = kind === 'SelfSubjectAccessReview' ? ctx.user : subjectOf(spec)
    return { ...obj, status: await decide(authorizer, reviewAttributes(user, spec)) }
  }
}
