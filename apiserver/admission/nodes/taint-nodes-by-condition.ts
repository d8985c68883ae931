// The TaintNodesByCondition admission plugin: a new node starts tainted not-ready (NoSchedule) until its lifecycle
// controller sees it Ready, so nothing is scheduled onto a node that has not reported.

import type { AdmissionPlugin } from '../plugins.js'
import type { Obj } from '../lookup.js'

export const NOT_READY_TAINT = 'node.kubernetes.io/not-ready'

export function taintNodesByConditionPlugin (): AdmissionPlugin {
  return {
    mutating: {
      async admit (a) {
        if (a.operation !== 'CREATE' || a.subresource !== '' || a.definition.group !== '' || a.definition.plural !== 'nodes') return
        a.object.spec ??= {}
        const spec = a.object.spec as Obj
        const taints = (spec.taints ?? []) as Obj[]
        if (taints.some(t => t.key === NOT_READY_TAINT && t.effect === 'NoSchedule')) return
        spec.taints = [...taints, { key: NOT_READY_TAINT, effect: 'NoSchedule' }]
      }
    }
  }
}
