// CRD validation rules (x-orch-validations) for the registry: compiled in the sandbox when a CRD is written
// or served, evaluated on every write of a custom object.

import type { FieldError, ResourceDefinition, StructuralSchema, SchemaDefinitions } from '../schema/types.js'
import type { Sandbox } from '../../sandbox/sandbox.js'
import { compileValidationRules, evaluateValidationRules, type CompiledValidation } from '../../sandbox/validation.js'
import { SandboxError } from '../../sandbox/errors.js'

export interface CompiledRules {
  /** Field errors of `obj` (transition rules see `old`; they are skipped on create). */
  evaluate(obj: unknown, old?: unknown): FieldError[]
  release(): void
}

export interface CelRules {
  /** Makes compile() ready for rules found anywhere in `node` (a CRD, a schema); cheap when there are none. */
  prepare(node: unknown): Promise<void>
  /** Compiles every rule under `schema`; field errors (named from `schemaPath`) when one does not compile or costs too much. */
  compile(schema: StructuralSchema, definitions: SchemaDefinitions, schemaPath: string): { ok: true; rules: CompiledRules } | { ok: false; errors: FieldError[] }
}

function hasRules (node: unknown, seen = new Set<unknown>()): boolean {
  if (node === null || typeof node !== 'object' || seen.has(node)) return false
  seen.add(node)
  // A CRD may spell the marker the Kubernetes way; both are rules (the schema module normalises them).
  const record = node as Record<string, unknown>
  if (Array.isArray(record['x-orch-validations']) || Array.isArray(record['x-kubernetes-validations'])) return true
  return Object.values(node as Record<string, unknown>).some(v => hasRules(v, seen))
}

/** Rules evaluated by a sandbox made on first need: a server whose CRDs carry no rules never pays for it. */
export function lazySandboxCelRules (create: () => Promise<Sandbox>): CelRules & { dispose(): void } {
  let sandbox: Sandbox | undefined
  let creating: Promise<Sandbox> | undefined
  const rules = (): CelRules => sandbox === undefined ? noCelRules : sandboxCelRules(sandbox)
  return {
    async prepare (node) {
      if (sandbox === undefined && hasRules(node)) sandbox = await (creating ??= create())
    },
    compile: (schema, definitions, schemaPath) => rules().compile(schema, definitions, schemaPath),
    dispose () { sandbox?.dispose(); sandbox = undefined }
  }
}

/** Rules evaluated by the sandbox; a schema without rules costs nothing. */
export function sandboxCelRules (sandbox: Sandbox): CelRules {
  return {
    async prepare () {},
    compile (schema, definitions, schemaPath) {
      if (!hasRules(schema) && !hasRules(definitions)) return { ok: true, rules: { evaluate: () => [], release () {} } }
      const r = compileValidationRules(schema, { sandbox, definitions, schemaPath })
      if (!r.ok) return { ok: false, errors: r.errors }
      const compiled: CompiledValidation = r.compiled
      return {
        ok: true,
        rules: {
          evaluate (obj, old) {
            try {
              return evaluateValidationRules(compiled, obj, old).errors
            } catch (err) {
              // As Kubernetes: a rule that cannot finish (budget, memory, deadline) fails validation.
              const why = err instanceof SandboxError && err.code === 'CEL_ERR_COST_BUDGET'
                ? 'validation failed due to running out of cost budget, no further validation rules will be run'
                : `validation rule could not be evaluated: ${(err as Error).message}`
              return [{ type: 'FieldValueInvalid', field: '<nil>', message: `Invalid value: "object": ${why}` }]
            }
          },
          release: () => compiled.release()
        }
      }
    }
  }
}

/** Without a sandbox: schemas carrying rules are refused rather than stored unchecked. */
export const noCelRules: CelRules = {
  async prepare () {},
  compile (schema, definitions, schemaPath) {
    if (!hasRules(schema) && !hasRules(definitions)) return { ok: true, rules: { evaluate: () => [], release () {} } }
    return { ok: false, errors: [{ type: 'FieldValueForbidden', field: schemaPath, message: 'Forbidden: x-orch-validations rules need the CEL sandbox, which this server runs without' }] }
  }
}

/** Compile-checks the rules of every version of a CRD (for its create and update). */
export function crdRuleErrors (crd: Record<string, unknown>, cel: CelRules, defsOf: (crd: Record<string, unknown>) => ResourceDefinition[]): FieldError[] {
  const versions = ((crd.spec as { versions?: Array<{ name?: string; schema?: { openAPIV3Schema?: unknown } }> } | undefined)?.versions) ?? []
  let defs: ResourceDefinition[]
  try { defs = defsOf(crd) } catch { return [] }
  const errors: FieldError[] = []
  versions.forEach((v, i) => {
    const def = defs.find(d => d.version === v.name)
    if (def === undefined) return
    const r = cel.compile(def.schema, def.definitions, `spec.versions[${i}].schema.openAPIV3Schema`)
    if (r.ok) r.rules.release()
    else errors.push(...r.errors)
  })
  return errors
}
