// CRD validation rules (x-orch-validations): compile a schema's rules once, then check objects against them.
//
// What the API server wires: at CRD create/update call compileValidationRules and reject with its field
// errors; on each create/update of a custom object call evaluateValidationRules(compiled, new, old?) and
// answer 422 Invalid with the field errors it returns. Both run in the sandbox in one crossing each.

import type { FieldError, SchemaDefinitions, StructuralSchema } from '../apiserver/schema/types.js'
import type { CostRange, Sandbox } from './sandbox.js'
import { SandboxError } from './errors.js'

/** Kubernetes' CEL budgets for CRD validation rules. */
export interface ValidationLimits {
  /** Static estimate limit of one rule (Kubernetes PerCallLimit for estimates: 10,000,000... per expression). */
  perExpressionEstimate: number
  /** Static estimate limit of all rules of a CRD schema, each times its node's cardinality (100,000,000). */
  perCrdEstimate: number
  /** Runtime cost limit of one rule evaluation (1,000,000). */
  perCallRuntime: number
  /** Runtime cost limit of all rules on one object (10,000,000). */
  perObjectRuntime: number
  /** Cardinality assumed for a list/map without maxItems/maxProperties in the per-CRD total. */
  unboundedCardinality: number
}

export const DEFAULT_VALIDATION_LIMITS: ValidationLimits = {
  perExpressionEstimate: 10_000_000,
  perCrdEstimate: 100_000_000,
  perCallRuntime: 1_000_000,
  perObjectRuntime: 10_000_000,
  unboundedCardinality: 1024,
}

export interface CompiledRuleInfo {
  /** Path of the rule in the schema, e.g. `openAPIV3Schema.properties[spec].x-orch-validations[0]`. */
  field: string
  estimate: CostRange
  /** How many times the rule's node can occur in one object (bounds of the lists/maps above it). */
  cardinality: number
}

export interface CompiledValidation {
  readonly sandbox: Sandbox
  readonly id: number
  readonly limits: ValidationLimits
  readonly rules: CompiledRuleInfo[]
  /** Sum of estimate.max x cardinality over all rules. */
  readonly totalEstimate: number
  release(): void
}

export type CompileValidationResult = { ok: true; compiled: CompiledValidation } | { ok: false; errors: FieldError[] }

export interface CompileValidationOptions {
  sandbox: Sandbox
  definitions?: SchemaDefinitions
  limits?: Partial<ValidationLimits>
  /** Prefix of the rule paths in errors (default `openAPIV3Schema`, as in a CRD's validation). */
  schemaPath?: string
}

interface GuestCompileRules {
  ok: boolean
  id?: number
  errors?: FieldError[]
  rules: CompiledRuleInfo[]
  total: number
}

/** Compiles every rule of the schema tree; errors are CRD field errors (compile failure, cost over limit). */
export function compileValidationRules(schema: StructuralSchema, options: CompileValidationOptions): CompileValidationResult {
  const limits = { ...DEFAULT_VALIDATION_LIMITS, ...options.limits }
  const { sandbox } = options
  const r = sandbox.guest.call<GuestCompileRules>(
    'compileRules',
    { schema, definitions: options.definitions ?? {}, limits, schemaPath: options.schemaPath ?? 'openAPIV3Schema' },
    Math.max(sandbox.limits.deadlineMs, 5000),
  )
  if (!r.ok) return { ok: false, errors: r.errors ?? [] }
  const id = r.id!
  let released = false
  return {
    ok: true,
    compiled: {
      sandbox,
      id,
      limits,
      rules: r.rules,
      totalEstimate: r.total,
      release() {
        if (released) return
        released = true
        sandbox.guest.call('releaseRules', { id })
      },
    },
  }
}

export interface ValidationOutcome {
  errors: FieldError[]
  /** Runtime cost used by all rules on this object. */
  cost: number
}

/**
 * Runs the compiled rules over `newObj` (and `oldObj` for transition rules: rules using `oldSelf` are
 * skipped on create, and where the old value has no counterpart unless optionalOldSelf is set).
 * Field paths are relative to the schema root, e.g. `spec.replicas`.
 */
export function evaluateValidationRules(compiled: CompiledValidation, newObj: unknown, oldObj?: unknown): ValidationOutcome {
  const r = compiled.sandbox.guest.call<{ ok: boolean; errors: FieldError[]; cost: number; code?: string; message?: string }>('validateObject', {
    id: compiled.id,
    obj: newObj,
    old: oldObj,
    hasOld: oldObj !== undefined,
    limits: compiled.limits,
  })
  if (!r.ok) throw new SandboxError('SANDBOX_ERR_INTERNAL', r.message ?? 'validation failed')
  return { errors: r.errors, cost: r.cost }
}
