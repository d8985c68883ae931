// Compiling one CEL expression of a configuration file at start: field errors worded as Kubernetes' validation.

import type { FieldError } from '../../schema/types.js'
import { invalid, required } from '../../schema/field-errors.js'
import type { CelEnvironment } from '../../../sandbox/sandbox.js'
import type { ExpressionEvaluator, PooledProgram } from '../../../sandbox/expression-evaluator.js'
import { SandboxError } from '../../../sandbox/errors.js'

/** A compile failure as Kubernetes words it under the expression's field path. */
export function celFieldError (at: string, expression: string, err: unknown): FieldError {
  if (err instanceof SandboxError) return invalid(at, expression, `compilation failed: ${err.issues ?? err.message}`)
  return invalid(at, expression, `compilation failed: ${(err as Error).message}`)
}

/** Compiles `expression`; a boolean rule must type-check to bool (or dyn, checked again at evaluation). */
export async function compileExpression (evaluator: ExpressionEvaluator, at: string, expression: string, env: CelEnvironment, wantBool: boolean, errs: FieldError[], all: PooledProgram[]): Promise<PooledProgram | undefined> {
  if (expression.trim() === '') { errs.push(required(at)); return undefined }
  let p: PooledProgram
  try {
    p = await evaluator.compileExpression(expression, env)
  } catch (err) {
    errs.push(celFieldError(at, expression, err))
    return undefined
  }
  all.push(p)
  if (wantBool && p.type !== 'bool' && p.type !== 'dyn') { errs.push(invalid(at, expression, 'must evaluate to bool')); return undefined }
  return p
}
