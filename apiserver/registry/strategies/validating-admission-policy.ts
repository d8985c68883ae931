// ValidatingAdmissionPolicy and its binding: Kubernetes' validation, with every expression compiled at write time.

import type { FieldError } from '../../schema/types.js'
import { child, duplicate, index, invalid, notSupported, required } from '../../schema/field-errors.js'
import type { Strategy } from '../strategy.js'
import type { Obj } from '../object-meta.js'
import type { ExpressionEvaluator } from '../../../sandbox/expression-evaluator.js'
import { compilePolicy } from '../../admission/vap/compile.js'
import type { BindingSpec, MatchResources, PolicySpec } from '../../admission/vap/types.js'

const OPERATIONS = ['*', 'CREATE', 'UPDATE', 'DELETE', 'CONNECT']
const CEL_IDENT = /^[A-Za-z_][A-Za-z0-9_]*$/
const QUALIFIED_NAME = /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/

function validateMatch (m: MatchResources | undefined, at: string, requireRules: boolean): FieldError[] {
  const errs: FieldError[] = []
  if (m === undefined) return requireRules ? [required(at)] : []
  if (requireRules && (m.resourceRules ?? []).length === 0) errs.push(required(child(at, 'resourceRules')))
  if (m.matchPolicy !== undefined && !['Exact', 'Equivalent'].includes(m.matchPolicy)) errs.push(notSupported(child(at, 'matchPolicy'), m.matchPolicy, ['Equivalent', 'Exact']))
  for (const field of ['resourceRules', 'excludeResourceRules'] as const) {
    for (const [i, r] of (m[field] ?? []).entries()) {
      const p = index(child(at, field), i)
      if ((r.apiGroups ?? []).length === 0) errs.push(required(child(p, 'apiGroups')))
      if ((r.apiVersions ?? []).length === 0) errs.push(required(child(p, 'apiVersions')))
      if ((r.resources ?? []).length === 0) errs.push(required(child(p, 'resources')))
      if ((r.operations ?? []).length === 0) errs.push(required(child(p, 'operations')))
      for (const [j, op] of (r.operations ?? []).entries()) if (!OPERATIONS.includes(op)) errs.push(notSupported(index(child(p, 'operations'), j), op, OPERATIONS))
      if (r.scope !== undefined && !['*', 'Cluster', 'Namespaced'].includes(r.scope)) errs.push(notSupported(child(p, 'scope'), r.scope, ['*', 'Cluster', 'Namespaced']))
    }
  }
  return errs
}

function validatePolicyShape (s: PolicySpec): FieldError[] {
  const errs = validateMatch(s.matchConstraints, 'spec.matchConstraints', true)
  if (s.failurePolicy !== undefined && !['Fail', 'Ignore'].includes(s.failurePolicy)) errs.push(notSupported('spec.failurePolicy', s.failurePolicy, ['Fail', 'Ignore']))
  if ((s.validations ?? []).length === 0 && (s.auditAnnotations ?? []).length === 0) errs.push(required('spec.validations', 'validations or auditAnnotations must contain at least one item'))
  if (s.paramKind !== undefined) {
    if ((s.paramKind.kind ?? '') === '') errs.push(required('spec.paramKind.kind'))
    if ((s.paramKind.apiVersion ?? '') === '') errs.push(required('spec.paramKind.apiVersion'))
  }
  const names = new Set<string>()
  for (const [i, m] of (s.matchConditions ?? []).entries()) {
    const p = child(index(child('spec', 'matchConditions'), i), 'name')
    if ((m.name ?? '') === '') errs.push(required(p))
    else if (!QUALIFIED_NAME.test(m.name)) errs.push(invalid(p, m.name, "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"))
    else if (names.has(m.name)) errs.push(duplicate(p, m.name))
    names.add(m.name)
  }
  for (const [i, v] of (s.variables ?? []).entries()) {
    const p = child(index(child('spec', 'variables'), i), 'name')
    if ((v.name ?? '') === '') errs.push(required(p))
    else if (!CEL_IDENT.test(v.name)) errs.push(invalid(p, v.name, 'name is not a valid CEL identifier'))
  }
  const keys = new Set<string>()
  for (const [i, a] of (s.auditAnnotations ?? []).entries()) {
    const p = child(index(child('spec', 'auditAnnotations'), i), 'key')
    if ((a.key ?? '') === '') errs.push(required(p))
    else if (keys.has(a.key)) errs.push(duplicate(p, a.key))
    keys.add(a.key)
  }
  for (const [i, v] of (s.validations ?? []).entries()) {
    const reasons = ['Unauthorized', 'Forbidden', 'Invalid', 'RequestEntityTooLarge']
    if (v.reason !== undefined && !reasons.includes(v.reason)) errs.push(notSupported(child(index(child('spec', 'validations'), i), 'reason'), v.reason, reasons))
  }
  return errs
}

/** Policies: the shape as Kubernetes validates it, then every expression compiled (absent evaluator: not compiled). */
export function createValidatingAdmissionPolicyStrategy (evaluator?: ExpressionEvaluator): Strategy {
  return {
    async validate (obj: Obj): Promise<FieldError[]> {
      const spec = (obj.spec ?? {}) as PolicySpec
      const errs = validatePolicyShape(spec)
      if (evaluator === undefined) return errs
      const { policy, errors } = await compilePolicy(evaluator, spec)
      policy.release()
      return [...errs, ...errors]
    }
  }
}

function validateBinding (s: BindingSpec): FieldError[] {
  const errs: FieldError[] = []
  if ((s.policyName ?? '') === '') errs.push(required('spec.policyName'))
  const actions = s.validationActions ?? []
  if (actions.length === 0) errs.push(required('spec.validationActions'))
  const seen = new Set<string>()
  for (const [i, a] of actions.entries()) {
    const p = index('spec.validationActions', i)
    if (!['Deny', 'Warn', 'Audit'].includes(a)) errs.push(notSupported(p, a, ['Audit', 'Deny', 'Warn']))
    seen.add(a)
  }
  if (seen.has('Deny') && seen.has('Warn')) errs.push(invalid('spec.validationActions', actions, 'must not contain both Deny and Warn (repeating the same validation failure information in the API response and headers serves no purpose)'))
  const r = s.paramRef
  if (r !== undefined) {
    const hasName = (r.name ?? '') !== ''
    if (hasName && r.selector !== undefined) errs.push(invalid('spec.paramRef.name', r.name, 'name and selector are mutually exclusive'))
    if (!hasName && r.selector === undefined) errs.push(required('spec.paramRef', 'one of name or selector must be specified'))
    if (r.parameterNotFoundAction === undefined) errs.push(required('spec.paramRef.parameterNotFoundAction'))
    else if (!['Allow', 'Deny'].includes(r.parameterNotFoundAction)) errs.push(notSupported('spec.paramRef.parameterNotFoundAction', r.parameterNotFoundAction, ['Allow', 'Deny']))
  }
  return [...errs, ...validateMatch(s.matchResources, 'spec.matchResources', false)]
}

export const validatingAdmissionPolicyBindingStrategy: Strategy = {
  validate: (obj: Obj) => validateBinding((obj.spec ?? {}) as BindingSpec)
}
