// The RuntimeClass admission plugin: a pod naming a RuntimeClass gets its pod overhead and its scheduling (node
// selector, tolerations); a pod naming a missing class, or another overhead, is refused.

import { isDeepStrictEqual } from 'node:util'
import { forbidden } from '../../errors/status-error.js'
import type { WriteAttributes } from '../../registry/admission.js'
import type { AdmissionDeps, AdmissionPlugin } from '../plugins.js'
import { getObject, type Obj } from '../lookup.js'

const applies = (a: WriteAttributes): boolean => a.operation === 'CREATE' && a.subresource === '' &&
  a.definition.group === '' && a.definition.plural === 'pods' && typeof (a.object.spec as Obj | undefined)?.runtimeClassName === 'string' &&
  (a.object.spec as Obj).runtimeClassName !== ''

const refuse = (a: WriteAttributes, why: string): Error => forbidden({ group: '', resource: 'pods' }, a.name, why)

async function classOf (deps: AdmissionDeps, a: WriteAttributes): Promise<Obj> {
  const name = String((a.object.spec as Obj).runtimeClassName)
  const rc = await getObject(deps.registry(), 'node.orch.io', 'v1', 'runtimeclasses', '', name)
  if (rc === undefined) throw refuse(a, `pod rejected: RuntimeClass "${name}" not found`)
  return rc
}

/** Merges the class's scheduling into the pod; a node selector key both set differently is a conflict. */
function schedule (a: WriteAttributes, spec: Obj, scheduling: Obj | undefined): void {
  const wanted = (scheduling?.nodeSelector ?? {}) as Record<string, string>
  const have = (spec.nodeSelector ?? {}) as Record<string, string>
  for (const [k, v] of Object.entries(wanted)) {
    if (have[k] !== undefined && have[k] !== v) {
      throw refuse(a, `conflict: runtimeClass.scheduling.nodeSelector[${k}] = ${v}; pod.spec.nodeSelector[${k}] = ${have[k]}`)
    }
  }
  if (Object.keys(wanted).length > 0) spec.nodeSelector = { ...have, ...wanted }
  const tolerations = (spec.tolerations ?? []) as Obj[]
  for (const t of (scheduling?.tolerations ?? []) as Obj[]) {
    if (!tolerations.some(x => isDeepStrictEqual(x, t))) tolerations.push(structuredClone(t))
  }
  if (tolerations.length > 0) spec.tolerations = tolerations
}

export function runtimeClassPlugin (deps: AdmissionDeps): AdmissionPlugin {
  return {
    mutating: {
      async admit (a) {
        if (!applies(a)) return
        const rc = await classOf(deps, a)
        const spec = a.object.spec as Obj
        const fixed = rc.overhead?.podFixed
        if (fixed !== undefined) {
          if (spec.overhead !== undefined && !isDeepStrictEqual(spec.overhead, fixed)) throw refuse(a, "pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead")
          spec.overhead = structuredClone(fixed)
        }
        schedule(a, spec, rc.scheduling)
      }
    },
    validating: {
      async admit (a) {
        if (!applies(a)) return
        const rc = await classOf(deps, a)
        const overhead = (a.object.spec as Obj).overhead
        const fixed = rc.overhead?.podFixed
        if (fixed === undefined ? overhead !== undefined : !isDeepStrictEqual(overhead, fixed)) {
          throw refuse(a, "pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead")
        }
      }
    }
  }
}
