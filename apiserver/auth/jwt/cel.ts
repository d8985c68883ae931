// The CEL expressions of one JWT authenticator: compiled at start (field errors name the expression), evaluated per token.
//
// Variables as Kubernetes names them: `claims` (the token's claims, map<string, dyn>) in claim validation rules and
// claim mappings; `user` (username, uid, groups, extra) in user validation rules. Every expression runs in the
// sandbox under its per-call cost budget.

import type { FieldError, StructuralSchema } from '../../schema/types.js'
import { child, index } from '../../schema/field-errors.js'
import type { CelEnvironment } from '../../../sandbox/sandbox.js'
import type { ExpressionEvaluator, PooledProgram } from '../../../sandbox/expression-evaluator.js'
import { compileExpression } from '../config/cel-compile.js'
import type { JWTAuthenticator } from './config.js'

const USER_SCHEMA: StructuralSchema = {
  type: 'object',
  properties: {
    username: { type: 'string' },
    uid: { type: 'string' },
    groups: { type: 'array', items: { type: 'string' } },
    extra: { type: 'object', additionalProperties: { type: 'array', items: { type: 'string' } } }
  }
}
export const CLAIMS_ENVIRONMENT: CelEnvironment = { variables: { claims: { type: 'map<string, dyn>' } } }
export const USER_ENVIRONMENT: CelEnvironment = { variables: { user: { schema: USER_SCHEMA } } }

export interface Rule { program: PooledProgram; message: string }

/** The compiled expressions of one authenticator; absent ones are mapped by claim or not at all. */
export interface JwtExpressions {
  claimValidation: Rule[]
  username?: PooledProgram
  groups?: PooledProgram
  uid?: PooledProgram
  extra: Array<{ key: string; program: PooledProgram }>
  userValidation: Rule[]
  release(): void
}

/** Compiles every expression of `a` (field paths under `at`, e.g. `jwt[0]`); field errors for those that do not compile. */
export async function compileJwtExpressions (evaluator: ExpressionEvaluator, a: JWTAuthenticator, at: string): Promise<{ expressions: JwtExpressions; errors: FieldError[] }> {
  const errors: FieldError[] = []
  const all: PooledProgram[] = []
  const compile = async (path: string, e: string, env: CelEnvironment, wantBool: boolean): Promise<PooledProgram | undefined> => await compileExpression(evaluator, path, e, env, wantBool, errors, all)
  const out: JwtExpressions = { claimValidation: [], extra: [], userValidation: [], release: () => { for (const p of all) p.release() } }
  for (const [i, r] of (a.claimValidationRules ?? []).entries()) {
    if ((r.claim ?? '') !== '' || (r.expression ?? '') === '') continue
    const p = await compile(child(index(child(at, 'claimValidationRules'), i), 'expression'), r.expression!, CLAIMS_ENVIRONMENT, true)
    if (p !== undefined) out.claimValidation.push({ program: p, message: r.message ?? '' })
  }
  const m = a.claimMappings
  const mapping = child(at, 'claimMappings')
  if ((m.username.expression ?? '') !== '' && (m.username.claim ?? '') === '') out.username = await compile(child(child(mapping, 'username'), 'expression'), m.username.expression!, CLAIMS_ENVIRONMENT, false)
  if ((m.groups?.expression ?? '') !== '' && (m.groups?.claim ?? '') === '') out.groups = await compile(child(child(mapping, 'groups'), 'expression'), m.groups!.expression!, CLAIMS_ENVIRONMENT, false)
  if ((m.uid?.expression ?? '') !== '' && (m.uid?.claim ?? '') === '') out.uid = await compile(child(child(mapping, 'uid'), 'expression'), m.uid!.expression!, CLAIMS_ENVIRONMENT, false)
  const seenKeys = new Set<string>()
  for (const [i, x] of (m.extra ?? []).entries()) {
    if ((x.valueExpression ?? '') === '' || seenKeys.has(x.key)) continue
    seenKeys.add(x.key)
    const p = await compile(child(index(child(mapping, 'extra'), i), 'valueExpression'), x.valueExpression, CLAIMS_ENVIRONMENT, false)
    if (p !== undefined) out.extra.push({ key: x.key, program: p })
  }
  const seenRules = new Set<string>()
  for (const [i, r] of (a.userValidationRules ?? []).entries()) {
    if ((r.expression ?? '') === '' || seenRules.has(r.expression)) continue
    seenRules.add(r.expression)
    const p = await compile(child(index(child(at, 'userValidationRules'), i), 'expression'), r.expression, USER_ENVIRONMENT, true)
    if (p !== undefined) out.userValidation.push({ program: p, message: r.message ?? '' })
  }
  return { expressions: out, errors }
}

/** A mapping's value as a list of strings (string, list of strings; '' / [] / null mean none), as Kubernetes converts it. */
export function stringList (value: unknown): string[] {
  if (value === null || value === undefined) return []
  if (typeof value === 'string') return value === '' ? [] : [value]
  if (Array.isArray(value) && value.every(v => typeof v === 'string')) return value.filter(v => v !== '')
  throw new Error('expression must return a string or a list of strings')
}

/** Runs boolean rules in order; the first false one fails with Kubernetes' wording. */
export async function checkRules (rules: Rule[], variables: Record<string, unknown>): Promise<void> {
  for (const r of rules) {
    const { value } = await r.program.evaluate(variables)
    if (typeof value !== 'boolean') throw new Error('validation expression must return a boolean')
    if (!value) throw new Error(`validation expression '${r.program.expression}' failed: ${r.message}`)
  }
}
