// pods/{name}/binding: assigns an unscheduled pod to a node (what the scheduler posts), as kube-apiserver's BindingREST.

import { conflict, invalid, notFound } from '../../errors/status-error.js'
import type { GenericStore } from '../generic-store.js'
import type { Obj } from '../object-meta.js'
import type { DecodedObject, RequestContext, SubresourceCreater, SubresourceResult } from '../types.js'

const POD_BINDING = { group: '', resource: 'pods/binding' }

export function successStatus (code: number): Obj {
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code }
}

/** Sets `spec.nodeName` (and the Binding's annotations) once, with a PodScheduled=True condition. */
export function createBindingSubresource (pods: GenericStore, now: () => number): SubresourceCreater {
  return {
    requestKind: { apiVersions: ['v1'], kind: 'Binding' },
    async create (ctx: RequestContext, namespace: string, name: string, body: DecodedObject): Promise<SubresourceResult> {
      const binding = body.object
      const target = (binding.target ?? {}) as { kind?: string, name?: string }
      const causes = []
      if (typeof target.name !== 'string' || target.name === '') causes.push({ reason: 'FieldValueRequired', field: 'target.name', message: 'Required value' })
      if (target.kind !== undefined && target.kind !== '' && target.kind !== 'Node') {
        causes.push({ reason: 'FieldValueNotSupported', field: 'target.kind', message: `Unsupported value: "${target.kind}": supported values: "Node"` })
      }
      if (causes.length > 0) throw invalid('', 'Binding', name, causes)
      const annotations = ((binding.metadata as Obj | undefined)?.annotations ?? {}) as Record<string, string>
      if (ctx.dryRun) return { status: 201, object: successStatus(201) }
      let refusal: string | undefined
      const written = await pods.updateInternal(ctx, namespace, name, pod => {
        const meta = pod.metadata as Obj
        const spec = pod.spec as Obj
        if (meta.deletionTimestamp !== undefined && meta.deletionTimestamp !== null) {
          refusal = `pod ${name} is being deleted, cannot be assigned to a host`
          return false
        }
        if (typeof spec.nodeName === 'string' && spec.nodeName !== '') {
          refusal = `pod ${name} is already assigned to node "${spec.nodeName}"`
          return false
        }
        spec.nodeName = target.name
        if (Object.keys(annotations).length > 0) meta.annotations = { ...(meta.annotations as Obj | undefined), ...annotations }
        setScheduledCondition(pod, new Date(now()).toISOString().replace(/\.\d{3}Z$/, 'Z'))
        return true
      })
      if (written === undefined) throw notFound({ group: '', resource: 'pods' }, name)
      if (refusal !== undefined) throw conflict(POD_BINDING, name, refusal)
      return { status: 201, object: successStatus(201) }
    }
  }
}

function setScheduledCondition (pod: Obj, time: string): void {
  const status = (pod.status ??= {}) as Obj
  const conditions = Array.isArray(status.conditions) ? status.conditions as Obj[] : []
  const rest = conditions.filter(c => c.type !== 'PodScheduled')
  status.conditions = [...rest, { type: 'PodScheduled', status: 'True', lastProbeTime: null, lastTransitionTime: time }]
}
