// Type checking of a policy against the kinds it matches: warnings for expressions that do not check with `object`
// typed as each matched kind's schema (ValidatingAdmissionPolicyStatus.typeChecking), as kube-apiserver's checker.

import type { Registry } from '../../registry/types.js'
import type { ResourceDefinition } from '../../schema/types.js'
import type { CelEnvironment } from '../../../sandbox/sandbox.js'
import type { ExpressionEvaluator } from '../../../sandbox/expression-evaluator.js'
import { SandboxError } from '../../../sandbox/errors.js'
import { POLICY_ENVIRONMENT } from './environment.js'
import { ruleMatches } from './matching.js'
import type { PolicySpec } from './types.js'

export interface ExpressionWarning { fieldRef: string, warning: string }
export type PolicyTypeChecker = (spec: PolicySpec) => Promise<ExpressionWarning[]>

/** At most this many kinds are checked per policy (Kubernetes caps its checker likewise). */
const MAX_KINDS = 10

function expressionsOf (s: PolicySpec): Array<{ fieldRef: string, expression: string }> {
  const out: Array<{ fieldRef: string, expression: string }> = []
  for (const [i, v] of (s.validations ?? []).entries()) {
    out.push({ fieldRef: `spec.validations[${i}].expression`, expression: v.expression })
    if ((v.messageExpression ?? '') !== '') out.push({ fieldRef: `spec.validations[${i}].messageExpression`, expression: v.messageExpression! })
  }
  for (const [i, a] of (s.auditAnnotations ?? []).entries()) out.push({ fieldRef: `spec.auditAnnotations[${i}].valueExpression`, expression: a.valueExpression })
  for (const [i, m] of (s.matchConditions ?? []).entries()) out.push({ fieldRef: `spec.matchConditions[${i}].expression`, expression: m.expression })
  return out
}

/** The kinds a policy's rules name explicitly (wildcards are not checked, as in Kubernetes). */
function matchedKinds (registry: Registry, s: PolicySpec): ResourceDefinition[] {
  const rules = (s.matchConstraints?.resourceRules ?? []).filter(r => ![...(r.apiGroups ?? []), ...(r.resources ?? [])].includes('*'))
  return registry.definitions().filter(d => d.virtual !== true && rules.some(r => ruleMatches({ ...r, operations: ['*'], resourceNames: [] },
    { definition: d, operation: 'CREATE', subresource: '', name: '', labels: [] }, false))).slice(0, MAX_KINDS)
}

export function createPolicyTypeChecker (registry: Registry, evaluator: ExpressionEvaluator): PolicyTypeChecker {
  return async (spec) => {
    const warnings = new Map<string, string[]>()
    for (const d of matchedKinds(registry, spec)) {
      const typed = { schema: d.schema }
      const env: CelEnvironment = { ...POLICY_ENVIRONMENT, definitions: d.definitions, variables: { ...POLICY_ENVIRONMENT.variables, object: typed, oldObject: typed } }
      const gvk = `${d.group === '' ? '' : d.group + '/'}${d.version}, Kind=${d.kind}`
      for (const e of expressionsOf(spec)) {
        try {
          (await evaluator.compileExpression(e.expression, env)).release()
        } catch (err) {
          const text = err instanceof SandboxError ? (err.issues ?? err.message) : (err as Error).message
          warnings.set(e.fieldRef, [...(warnings.get(e.fieldRef) ?? []), `${gvk}: ${text}`])
        }
      }
    }
    return [...warnings].map(([fieldRef, list]) => ({ fieldRef, warning: list.join('\n') }))
  }
}
