// ValidatingAdmissionPolicyStatus controller: type-checks each policy at its generation and writes the warnings
// (status.typeChecking.expressionWarnings) and status.observedGeneration, as kube-apiserver's controller does.

import { QueueController, type ControllerContext } from '../controller.js'
import type { Obj, Resource } from '../client/types.js'
import type { SharedInformer } from '../informer.js'
import { writeStatus } from '../status-patch.js'
import type { PolicyTypeChecker } from '../../admission/vap/type-check.js'
import type { PolicySpec } from '../../admission/vap/types.js'

export const VALIDATING_ADMISSION_POLICIES: Resource = { group: 'admissionregistration.orch.io', version: 'v1beta1', resource: 'validatingadmissionpolicies', namespaced: false }

export class ValidatingAdmissionPolicyStatusController extends QueueController {
  private readonly policies: SharedInformer

  constructor (c: ControllerContext, private readonly check: PolicyTypeChecker) {
    super('validatingadmissionpolicy-status-controller', c)
    this.policies = c.informers.informer(VALIDATING_ADMISSION_POLICIES)
  }

  protected watch (): void {
    const enqueue = (o: Obj): void => { this.queue.add(String(o.metadata.name)) }
    this.policies.addEventHandler({ add: enqueue, update: (_old: Obj, o: Obj) => enqueue(o) })
  }

  async reconcile (name: string): Promise<void> {
    const p = this.policies.get(name)
    if (p === undefined) return
    const generation = Number(p.metadata.generation ?? 0)
    if (p.status?.observedGeneration === generation) return
    const expressionWarnings = await this.check((p.spec ?? {}) as PolicySpec)
    const status: Obj = { ...(p.status ?? {}), observedGeneration: generation, typeChecking: expressionWarnings.length === 0 ? {} : { expressionWarnings } }
    await writeStatus(this.c, VALIDATING_ADMISSION_POLICIES, p, status)
  }
}
