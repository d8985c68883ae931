// Roles and bindings: the rules Kubernetes' rbac validation checks in code (pkg/apis/rbac/validation) and subject defaults.

import type { FieldError } from '../../schema/types.js'
import { child, index, invalid, notSupported, required } from '../../schema/field-errors.js'
import { isDNS1123Subdomain, isPathSegmentName } from '../../schema/metadata.js'
import type { Strategy } from '../strategy.js'
import type { Obj } from '../object-meta.js'

/** The group roleRef and User/Group subjects name; orch's own spelling is accepted as the same group. */
export const RBAC_GROUP = 'rbac.authorization.k8s.io'
const RBAC_GROUPS = [RBAC_GROUP, 'rbac.authorization.orch.io']

/** field.Invalid with the value as Go prints its typed form (`[]string{"a"}`, `rbac.RoleRef{...}`), not as an interface. */
function invalidTyped (field: string, rendered: string, detail: string): FieldError {
  return { type: 'FieldValueInvalid', field, message: `Invalid value: ${rendered}: ${detail}` }
}
const stringSlice = (v: string[] | undefined): string => `[]string{${(v ?? []).map(x => JSON.stringify(x)).join(', ')}}`
const roleRefValue = (r: { apiGroup?: string, kind?: string, name?: string } | undefined): string =>
  `rbac.RoleRef{APIGroup:${JSON.stringify(r?.apiGroup ?? '')}, Kind:${JSON.stringify(r?.kind ?? '')}, Name:${JSON.stringify(r?.name ?? '')}}`

type Rule = { apiGroups?: string[], resources?: string[], verbs?: string[], nonResourceURLs?: string[] }

function validateRule (rule: Rule, namespaced: boolean, path: string): FieldError[] {
  const errs: FieldError[] = []
  if ((rule.verbs ?? []).length === 0) errs.push(required(child(path, 'verbs'), 'verbs must contain at least one value'))
  if ((rule.nonResourceURLs ?? []).length > 0) {
    const urls = child(path, 'nonResourceURLs')
    if (namespaced) errs.push(invalidTyped(urls, stringSlice(rule.nonResourceURLs), 'namespaced rules cannot apply to non-resource URLs'))
    if ((rule.apiGroups ?? []).length > 0 || (rule.resources ?? []).length > 0) {
      errs.push(invalidTyped(urls, stringSlice(rule.nonResourceURLs), 'rules cannot apply to both regular resources and non-resource URLs'))
    }
    return errs
  }
  if ((rule.apiGroups ?? []).length === 0) errs.push(required(child(path, 'apiGroups'), 'resource rules must supply at least one api group'))
  if ((rule.resources ?? []).length === 0) errs.push(required(child(path, 'resources'), 'resource rules must supply at least one resource'))
  return errs
}

function validateRules (obj: Obj, namespaced: boolean): FieldError[] {
  const rules = Array.isArray(obj.rules) ? obj.rules as Rule[] : []
  return rules.flatMap((r, i) => validateRule(r ?? {}, namespaced, index('rules', i)))
}

function validateAggregation (obj: Obj): FieldError[] {
  const rule = obj.aggregationRule as { clusterRoleSelectors?: unknown[] } | undefined | null
  if (rule === undefined || rule === null) return []
  if ((rule.clusterRoleSelectors ?? []).length === 0) {
    return [required('aggregationRule.clusterRoleSelectors', 'at least one clusterRoleSelector required if aggregationRule is non-nil')]
  }
  return []
}

interface Subject { kind?: string, apiGroup?: string, name?: string, namespace?: string }

function validateSubject (s: Subject, namespaced: boolean, path: string): FieldError[] {
  const errs: FieldError[] = []
  if (s.name === undefined || s.name === '') errs.push(required(child(path, 'name')))
  switch (s.kind) {
    case 'ServiceAccount':
      if (s.name !== undefined && s.name !== '') for (const m of isDNS1123Subdomain(s.name)) errs.push(invalid(child(path, 'name'), s.name, m))
      if ((s.apiGroup ?? '') !== '') errs.push(notSupported(child(path, 'apiGroup'), s.apiGroup, ['']))
      if (!namespaced && (s.namespace ?? '') === '') errs.push(required(child(path, 'namespace')))
      break
    case 'User': case 'Group':
      if (!RBAC_GROUPS.includes(s.apiGroup ?? '')) errs.push(notSupported(child(path, 'apiGroup'), s.apiGroup ?? '', [RBAC_GROUP]))
      break
    default:
      errs.push(notSupported(child(path, 'kind'), s.kind ?? '', ['ServiceAccount', 'User', 'Group']))
  }
  return errs
}

function validateBinding (obj: Obj, namespaced: boolean): FieldError[] {
  const errs: FieldError[] = []
  const ref = (obj.roleRef ?? {}) as { apiGroup?: string, kind?: string, name?: string }
  if (!RBAC_GROUPS.includes(ref.apiGroup ?? '')) errs.push(notSupported('roleRef.apiGroup', ref.apiGroup ?? '', [RBAC_GROUP]))
  const kinds = namespaced ? ['Role', 'ClusterRole'] : ['ClusterRole']
  if (!kinds.includes(ref.kind ?? '')) errs.push(notSupported('roleRef.kind', ref.kind ?? '', kinds))
  if (ref.name === undefined || ref.name === '') errs.push(required('roleRef.name'))
  else for (const m of isPathSegmentName(ref.name)) errs.push(invalid('roleRef.name', ref.name, m))
  const subjects = Array.isArray(obj.subjects) ? obj.subjects as Subject[] : []
  subjects.forEach((s, i) => errs.push(...validateSubject(s ?? {}, namespaced, index('subjects', i))))
  return errs
}

/** SetDefaults_Subject: User and Group subjects name the RBAC group, service accounts the core group. */
function defaultSubjects (obj: Obj): void {
  if (!Array.isArray(obj.subjects)) return
  for (const s of obj.subjects as Subject[]) {
    if (s === null || typeof s !== 'object' || s.apiGroup !== undefined) continue
    if (s.kind === 'User' || s.kind === 'Group') s.apiGroup = RBAC_GROUP
    else if (s.kind === 'ServiceAccount') s.apiGroup = ''
  }
}

function bindingStrategy (namespaced: boolean): Strategy {
  return {
    prepareForCreate: defaultSubjects,
    prepareForUpdate: defaultSubjects,
    validate: obj => validateBinding(obj, namespaced),
    validateUpdate (obj, old) {
      const same = JSON.stringify(obj.roleRef ?? null) === JSON.stringify(old.roleRef ?? null)
      return same ? [] : [invalidTyped('roleRef', roleRefValue(obj.roleRef as never), 'cannot change roleRef')]
    }
  }
}

export const roleStrategy: Strategy = { validate: obj => validateRules(obj, true) }
export const clusterRoleStrategy: Strategy = { validate: obj => [...validateRules(obj, false), ...validateAggregation(obj)] }
export const roleBindingStrategy = bindingStrategy(true)
export const clusterRoleBindingStrategy = bindingStrategy(false)
