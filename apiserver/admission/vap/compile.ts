// Compiling every expression of a policy: at write time (field errors name the expression) and per policy generation.

import type { FieldError } from '../../schema/types.js'
import { child, index, invalid } from '../../schema/field-errors.js'
import type { ExpressionEvaluator, PooledProgram } from '../../../sandbox/expression-evaluator.js'
import { compileExpression } from '../../auth/config/cel-compile.js'
import { AUTHORIZER_ENVIRONMENT, POLICY_ENVIRONMENT } from './environment.js'
import { usesAuthorizer } from './authorizer.js'
import type { PolicySpec } from './types.js'

export interface CompiledValidation { program: PooledProgram, message?: string, messageProgram?: PooledProgram, reason?: string }

export interface CompiledPolicy {
  matchConditions: Array<{ name: string, program: PooledProgram }>
  variables: Map<string, PooledProgram>
  validations: CompiledValidation[]
  auditAnnotations: Array<{ key: string, program: PooledProgram }>
  release(): void
}

/**
 * Compiles every expression of `spec` (paths under `at`); field errors for those that do not compile or type wrongly.
 * Expressions using `authorizer` compile with the authorizer library, on `authz` when given (authorizer.ts).
 */
export async function compilePolicy (evaluator: ExpressionEvaluator, spec: PolicySpec, at = 'spec', authz?: ExpressionEvaluator): Promise<{ policy: CompiledPolicy, errors: FieldError[] }> {
  const errors: FieldError[] = []
  const all: PooledProgram[] = []
  const compile = async (path: string, e: string, wantBool: boolean): Promise<PooledProgram | undefined> => usesAuthorizer(e)
    ? await compileExpression(authz ?? evaluator, path, e, AUTHORIZER_ENVIRONMENT, wantBool, errors, all)
    : await compileExpression(evaluator, path, e, POLICY_ENVIRONMENT, wantBool, errors, all)
  const policy: CompiledPolicy = {
    matchConditions: [], variables: new Map(), validations: [], auditAnnotations: [],
    release: () => { for (const p of all) p.release() }
  }
  for (const [i, v] of (spec.variables ?? []).entries()) {
    const p = await compile(child(index(child(at, 'variables'), i), 'expression'), v.expression ?? '', false)
    if (p !== undefined) policy.variables.set(v.name, p)
  }
  for (const [i, m] of (spec.matchConditions ?? []).entries()) {
    const p = await compile(child(index(child(at, 'matchConditions'), i), 'expression'), m.expression ?? '', true)
    if (p !== undefined) policy.matchConditions.push({ name: m.name, program: p })
  }
  for (const [i, v] of (spec.validations ?? []).entries()) {
    const path = index(child(at, 'validations'), i)
    const p = await compile(child(path, 'expression'), v.expression ?? '', true)
    let messageProgram: PooledProgram | undefined
    if ((v.messageExpression ?? '') !== '') {
      messageProgram = await compile(child(path, 'messageExpression'), v.messageExpression!, false)
      if (messageProgram !== undefined && messageProgram.type !== 'string' && messageProgram.type !== 'dyn') {
        errors.push(invalid(child(path, 'messageExpression'), v.messageExpression, 'must evaluate to string'))
      }
    }
    if (p !== undefined) policy.validations.push({ program: p, message: v.message, messageProgram, reason: v.reason })
  }
  for (const [i, a] of (spec.auditAnnotations ?? []).entries()) {
    const path = child(index(child(at, 'auditAnnotations'), i), 'valueExpression')
    const p = await compile(path, a.valueExpression ?? '', false)
    if (p !== undefined && p.type !== 'string' && p.type !== 'dyn' && p.type !== 'null_type') {
      errors.push(invalid(path, a.valueExpression, 'must evaluate to one of [string null_type]'))
    } else if (p !== undefined) policy.auditAnnotations.push({ key: a.key, program: p })
  }
  return { policy, errors }
}
