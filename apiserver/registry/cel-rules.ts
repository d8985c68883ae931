// CRD validation rules (x-orch-validations) for the registry: compiled by the injected evaluator (the sandbox
// pool in `orch`) when a CRD is written or served, evaluated asynchronously on every write of a custom object.

import type { FieldError, ResourceDefinition, StructuralSchema, SchemaDefinitions } from '../schema/types.js'
import type { Sandbox } from '../../sandbox/sandbox.js'
import { inThreadRuleEvaluator, type RuleEvaluator } from '../../sandbox/rule-evaluator.js'
import { SandboxError } from '../../sandbox/errors.js'

export interface CompiledRules {
  /** Field errors of `obj` (transition rules see `old`; they are skipped on create). */
  evaluate(obj: unknown, old?: unknown): Promise<FieldError[]>
  release(): void
}

export type CompileRulesResult = { ok: true; rules: CompiledRules } | { ok: false; errors: FieldError[] }

export interface CelRules {
  /** Makes compile() ready for rules found anywhere in `node` (a CRD, a schema); cheap when there are none. */
  prepare(node: unknown): Promise<void>
  /** Compiles every rule under `schema`; field errors (named from `schemaPath`) when one does not compile or costs too much. */
  compile(schema: StructuralSchema, definitions: SchemaDefinitions, schemaPath: string): Promise<CompileRulesResult>
}

function hasRules (node: unknown, seen = new Set<unknown>()): boolean {
  if (node === null || typeof node !== 'object' || seen.has(node)) return false
  seen.add(node)
  // A CRD may spell the marker the Kubernetes way; both are rules (the schema module normalises them).
  const record = node as Record<string, unknown>
  if (Array.isArray(record['x-orch-validations']) || Array.isArray(record['x-kubernetes-validations'])) return true
  return Object.values(node as Record<string, unknown>).some(v => hasRules(v, seen))
}

const noRules: CompiledRules = { evaluate: async () => [], release () {} }

/**
 * Rules evaluated by an evaluator made on first need (the sandbox pool in `orch`): a server whose CRDs carry
 * no rules never pays for it. `dispose` closes it (no sandbox thread outlives the server).
 */
export function lazyCelRules (create: () => RuleEvaluator | Promise<RuleEvaluator>): CelRules & { dispose(): Promise<void> } {
  let evaluator: RuleEvaluator | undefined
  let creating: Promise<RuleEvaluator> | undefined
  return {
    async prepare (node) {
      if (evaluator === undefined && hasRules(node)) evaluator = await (creating ??= Promise.resolve(create()))
    },
    compile: async (schema, definitions, schemaPath) => await (evaluator === undefined ? noCelRules : evaluatorCelRules(evaluator)).compile(schema, definitions, schemaPath),
    async dispose () { const e = evaluator; evaluator = undefined; await e?.close() }
  }
}

/** The lazy form over an in-thread sandbox (tests); the sandbox is disposed with it. */
export function lazySandboxCelRules (create: () => Promise<Sandbox>): CelRules & { dispose(): Promise<void> } {
  return lazyCelRules(async () => inThreadRuleEvaluator(await create(), true))
}

/** Rules evaluated by an in-thread sandbox (a long rule blocks the event loop: tests, tools). */
export function sandboxCelRules (sandbox: Sandbox): CelRules {
  return evaluatorCelRules(inThreadRuleEvaluator(sandbox))
}

/** Rules compiled and evaluated by `evaluator`; a schema without rules costs nothing. */
export function evaluatorCelRules (evaluator: RuleEvaluator): CelRules {
  return {
    async prepare () {},
    async compile (schema, definitions, schemaPath) {
      if (!hasRules(schema) && !hasRules(definitions)) return { ok: true, rules: noRules }
      const r = await evaluator.compile(schema, { definitions, schemaPath })
      if (!r.ok) return { ok: false, errors: r.errors }
      const set = r.rules
      return {
        ok: true,
        rules: {
          async evaluate (obj, old) {
            try {
              return (await set.evaluate(obj, old)).errors
            } catch (err) {
              // As Kubernetes: a rule that cannot finish fails validation. The sandbox's deadline bounds the
              // same thing as the cost budget (CEL work per object; Kubernetes has no wall-clock limit of its
              // own), so running into it reads as running out of budget.
              const code = err instanceof SandboxError ? err.code : undefined
              const why = code === 'CEL_ERR_COST_BUDGET' || code === 'SANDBOX_ERR_DEADLINE'
                ? 'validation failed due to running out of cost budget, no further validation rules will be run'
                : `validation rule could not be evaluated: ${(err as Error).message}`
              return [{ type: 'FieldValueInvalid', field: '<nil>', message: `Invalid value: "object": ${why}` }]
            }
          },
          release: () => set.release()
        }
      }
    }
  }
}

/** Without a sandbox: schemas carrying rules are refused rather than stored unchecked. */
export const noCelRules: CelRules = {
  async prepare () {},
  async compile (schema, definitions, schemaPath) {
    if (!hasRules(schema) && !hasRules(definitions)) return { ok: true, rules: noRules }
    return { ok: false, errors: [{ type: 'FieldValueForbidden', field: schemaPath, message: 'Forbidden: x-orch-validations rules need the CEL sandbox, which this server runs without' }] }
  }
}

/** Compile-checks the rules of every version of a CRD (for its create and update). */
export async function crdRuleErrors (crd: Record<string, unknown>, cel: CelRules, defsOf: (crd: Record<string, unknown>) => ResourceDefinition[]): Promise<FieldError[]> {
  const versions = ((crd.spec as { versions?: Array<{ name?: string; schema?: { openAPIV3Schema?: unknown } }> } | undefined)?.versions) ?? []
  let defs: ResourceDefinition[]
  try { defs = defsOf(crd) } catch { return [] }
  const errors: FieldError[] = []
  for (const [i, v] of versions.entries()) {
    const def = defs.find(d => d.version === v.name)
    if (def === undefined) continue
    const r = await cel.compile(def.schema, def.definitions, `spec.versions[${i}].schema.openAPIV3Schema`)
    if (r.ok) r.rules.release()
    else errors.push(...r.errors)
  }
  return errors
}
