// Picks the strategy of a built-in kind by the definition's strategy name (or kind).

import type { Store } from '../../storage/store.js'
import type { ResourceDefinition } from '../../schema/types.js'
import type { Strategy } from '../strategy.js'
import { podStrategy } from './pod.js'
import { createServiceStrategy } from './service.js'
import { eventStrategy, jobStrategy, nodeStrategy, replicaSetStrategy, secretStrategy, volumePhaseStrategy, workloadStrategy } from './simple.js'
import { namespaceStrategy } from '../namespaces.js'
import { createCrdStrategy } from '../crds.js'
import { noCelRules, type CelRules } from '../cel-rules.js'
import { resourcePrefix } from '../keys.js'

export interface StrategyOptions {
  store: Store
  serviceCIDR?: string
  nodePortRange?: [number, number]
  /** CRD validation rules; without it, CRDs carrying rules are refused. */
  celRules?: CelRules
}

export function builtinStrategy (def: ResourceDefinition, o: StrategyOptions): Strategy | undefined {
  switch (def.strategy ?? (def.group === '' ? def.kind.toLowerCase() : '')) {
    case 'pod': return podStrategy
    case 'service': return createServiceStrategy({ store: o.store, prefix: resourcePrefix(def), serviceCIDR: o.serviceCIDR, nodePortRange: o.nodePortRange })
    case 'node': return nodeStrategy
    case 'event': return eventStrategy
    case 'secret': return secretStrategy
    case 'namespace': return namespaceStrategy
    case 'crd': return createCrdStrategy(o.celRules ?? noCelRules)
    case 'replicaset': return replicaSetStrategy
    case 'deployment': case 'statefulset': case 'daemonset': return workloadStrategy
    case 'job': return jobStrategy
    case 'persistentvolume': case 'persistentvolumeclaim': return volumePhaseStrategy
    default: return undefined
  }
}
