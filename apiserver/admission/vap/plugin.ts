// The ValidatingAdmissionPolicy admission plugin: every binding whose policy matches the write is evaluated.
//
// Denials as kube-apiserver words them; Warn adds a `Warning` header, Audit the audit annotation
// `validation.policy.admission.k8s.io/validation_failure`. Policies and bindings of admissionregistration are not
// themselves subject to policies (no lockout), as in Kubernetes.

import type { Registry } from '../../registry/types.js'
import type { WriteAdmission, WriteAttributes } from '../../registry/admission.js'
import type { Authorizer } from '../../auth/types.js'
import type { FeatureGates } from '../../featuregate/featuregate.js'
import type { ExpressionEvaluator, PooledProgram } from '../../../sandbox/expression-evaluator.js'
import { forbidden, StatusError, type StatusReason } from '../../errors/status-error.js'
import { labelsOf } from '../../controllers/labels.js'
import type { Obj } from '../../registry/object-meta.js'
import { createPolicySource, internalContext, type PolicySource } from './source.js'
import { createAuthorizerEvaluator } from './authorizer.js'
import { selectorsMatch, type MatchRequest } from './matching.js'
import { createCandidateIndex, type Candidate } from './candidates.js'
import { createPolicyEvaluation, type Failure, type PolicyEvaluation } from './evaluate.js'
import type { PolicyBatch } from '../../../sandbox/policy-evaluation.js'
import { findParams } from './params.js'
import type { BindingObject, PolicyObject } from './types.js'

export const AUDIT_KEY = 'validation.policy.admission.k8s.io/validation_failure'
const CODES: Record<string, number> = { Unauthorized: 401, Forbidden: 403, Invalid: 422, RequestEntityTooLarge: 413 }

export interface ValidatingAdmissionPolicyPlugin {
  validating: WriteAdmission
  /** Lists and watches policies and bindings; call before serving. */
  start(): Promise<void>
  stop(): void
}

export const FEATURE_GATE = 'ValidatingAdmissionPolicy'

/**
 * `featureGates`: with the gate ValidatingAdmissionPolicy off (its default), the plugin admits everything and watches
 * nothing. `authorizer` answers the `authorizer` CEL variable's checks (without it they are denied).
 */
export function createValidatingAdmissionPolicyPlugin (deps: { registry: Registry, authorizer?: Authorizer, evaluator: ExpressionEvaluator, featureGates?: FeatureGates }): ValidatingAdmissionPolicyPlugin {
  if (deps.featureGates !== undefined && !deps.featureGates.enabled(FEATURE_GATE)) {
    return { validating: { admit: async () => {} }, start: async () => {}, stop: () => {} }
  }
  let authz: ExpressionEvaluator | undefined
  const source = createPolicySource(deps.registry, deps.evaluator, () => authz)
  const evaluate = createPolicyEvaluation(deps.evaluator)
  const candidatesFor = createCandidateIndex(source)
  return {
    validating: { admit: async (a) => { await admit(deps.registry, evaluate, source, candidatesFor, a) } },
    start: async () => {
      if (deps.authorizer !== undefined) authz = await createAuthorizerEvaluator(deps.authorizer)
      await source.start()
    },
    stop: () => { source.stop() }
  }
}

async function namespaceOf (registry: Registry, a: WriteAttributes): Promise<Obj | undefined> {
  if (!a.definition.namespaced || a.namespace === '') return a.definition.group === '' && a.definition.plural === 'namespaces' ? a.object : undefined
  const known = registry.knownNamespace(a.namespace)
  if (known !== undefined) return known as Obj
  try { return (await registry.handler('', 'v1', 'namespaces')?.get(internalContext(), '', a.namespace, {}) as { object: Obj } | undefined)?.object } catch { return undefined }
}

function requestVariable (a: WriteAttributes): Record<string, unknown> {
  const d = a.definition
  const kind = { group: d.group, version: d.version, kind: d.kind }
  const resource = { group: d.group, version: d.version, resource: d.plural }
  const u = a.ctx.user
  return {
    kind, resource, subResource: a.subresource, requestKind: kind, requestResource: resource, requestSubResource: a.subresource,
    name: a.name, namespace: a.namespace, operation: a.operation, dryRun: a.ctx.dryRun,
    userInfo: { username: u.username, uid: u.uid ?? '', groups: u.groups ?? [], extra: u.extra ?? {} }
  }
}

interface Denial { policy: string, binding: string, failure: Failure }

async function admit (registry: Registry, evaluate: PolicyEvaluation, source: PolicySource, candidatesFor: (req: MatchRequest) => Candidate[], a: WriteAttributes): Promise<void> {
  if (a.definition.group === 'admissionregistration.orch.io' || source.bindings.size === 0) return
  const object = a.operation === 'DELETE' ? null : a.object
  const oldObject = a.operation === 'DELETE' ? a.object : (a.oldObject ?? null)
  // labels are read only once some binding's rules select the write
  const req: MatchRequest = { definition: a.definition, operation: a.operation, subresource: a.subresource, name: a.name, labels: [] }
  // Rules first (kept per kind of write); the namespace is read only when some binding's rules select the write.
  const candidates = candidatesFor(req)
  if (candidates.length === 0) return
  req.labels = [object, oldObject].filter((o): o is Obj => o !== null).map(labelsOf)
  const ns = await namespaceOf(registry, a)
  req.namespaceLabels = ns === undefined ? undefined : labelsOf(ns)
  const base = { object, oldObject, request: requestVariable(a), namespaceObject: ns ?? null }
  // the rules matched in the first pass: the selectors decide now
  const selected = candidates.filter(([policy, binding]) => selectorsMatch(policy.spec?.matchConstraints, req) && selectorsMatch(binding.spec?.matchResources, req))
  // Every binding's params are looked up at once; then all their evaluations cross to the sandbox together, and
  // the results are applied in binding order.
  const prepared = await Promise.all(selected.map(async ([policy, binding]) => await prepareBinding(registry, source, policy, binding, a)))
  const items = prepared.flatMap(p => 'items' in p ? p.items : [])
  const outcomes = items.length === 0 ? [] : await evaluate({ base, items })
  let next = 0
  let denial: Denial | undefined
  for (const [i, [policy, binding]] of selected.entries()) {
    const p = prepared[i]
    const failures = 'failures' in p ? p.failures : []
    if ('items' in p) {
      for (const _ of p.items) {
        const r = outcomes[next++]
        failures.push(...r.failures)
        for (const [k, v] of Object.entries(r.auditAnnotations)) (a.ctx.auditAnnotations ??= {})[`${policy.metadata.name}/${k}`] = v
      }
    }
    for (const f of failures) denial ??= act(a, policy, binding, f)
  }
  if (denial !== undefined) throw denied(a, denial)
}

type Item = PolicyBatch<PooledProgram>['items'][number]

/** A binding's evaluations (one per params object), or its failures when it cannot be evaluated. */
async function prepareBinding (registry: Registry, source: PolicySource, policy: PolicyObject, binding: BindingObject, a: WriteAttributes): Promise<{ items: Item[] } | { failures: Failure[] }> {
  const failOnError = (policy.spec?.failurePolicy ?? 'Fail') === 'Fail'
  const misconfigured = (message: string): { failures: Failure[] } => ({ failures: failOnError ? [{ message }] : [] })
  const compiled = await source.compiled(policy)
  if (compiled === undefined) return misconfigured(`policy '${policy.metadata.name}' has expressions that do not compile`)
  let paramsList: Array<unknown> = [null]
  if (policy.spec?.paramKind !== undefined) {
    const ref = binding.spec?.paramRef
    if (ref === undefined) return misconfigured(`failed to configure binding: paramRef is required when paramKind is set`)
    const found = await findParams(registry, policy.spec.paramKind, ref, a.namespace)
    if (typeof found === 'string') return misconfigured(found)
    if (found.length === 0) {
      return { failures: (ref.parameterNotFoundAction ?? 'Deny') === 'Deny' ? [{ message: 'no params found for policy binding with `Deny` parameterNotFoundAction' }] : [] }
    }
    paramsList = found
  }
  return { items: paramsList.map(params => ({ plan: compiled, params, failOnError })) }
}

/** Applies the binding's actions to one failure; returns the denial when Deny is among them. */
function act (a: WriteAttributes, policy: PolicyObject, binding: BindingObject, f: Failure): Denial | undefined {
  const actions = binding.spec?.validationActions ?? []
  const p = policy.metadata.name
  const b = binding.metadata.name
  if (actions.includes('Warn')) a.ctx.warnings.push(`Validation failed for ValidatingAdmissionPolicy '${p}' with binding '${b}': ${f.message}`)
  if (actions.includes('Audit')) {
    const annotations = (a.ctx.auditAnnotations ??= {})
    const list = annotations[AUDIT_KEY] !== undefined ? JSON.parse(annotations[AUDIT_KEY]) as unknown[] : []
    list.push({ message: f.message, policy: p, binding: b, expressionIndex: f.expressionIndex ?? 0, validationActions: actions })
    annotations[AUDIT_KEY] = JSON.stringify(list)
  }
  return actions.includes('Deny') ? { policy: p, binding: b, failure: f } : undefined
}

/** kube-apiserver's denial: a Forbidden message, its reason (default Invalid) and code, the message as a cause. */
function denied (a: WriteAttributes, d: Denial): StatusError {
  const message = `ValidatingAdmissionPolicy '${d.policy}' with binding '${d.binding}' denied request: ${d.failure.message}`
  const base = forbidden({ group: a.definition.group, resource: a.definition.plural }, a.name, message)
  const reason = (d.failure.reason ?? 'Invalid') as StatusReason
  return new StatusError(CODES[reason] ?? 422, reason, base.message, { ...base.details, causes: [{ message }] })
}
