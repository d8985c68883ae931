// Objects a fresh cluster has from the start: the `wasm` RuntimeClass naming the orchlet's WebAssembly runtime handler,
// and Kubernetes' two system PriorityClasses.

import { RESOURCES, type ApiClient } from '../client/types.js'
import type { Logger } from '../../registry/core.js'

export const WASM_RUNTIME_CLASS = { apiVersion: 'node.orch.io/v1', kind: 'RuntimeClass', metadata: { name: 'wasm' }, handler: 'wasm' }

export const SYSTEM_PRIORITY_CLASSES = [
  { apiVersion: 'scheduling.orch.io/v1', kind: 'PriorityClass', metadata: { name: 'system-node-critical' }, value: 2000001000, description: 'Used for system critical pods that must not be moved from their current node.' },
  { apiVersion: 'scheduling.orch.io/v1', kind: 'PriorityClass', metadata: { name: 'system-cluster-critical' }, value: 2000000000, description: 'Used for system critical pods that must run in the cluster, but can be moved to another node if necessary.' }
]

/** Creates what is missing; never replaces what an operator changed. */
export async function bootstrapClusterObjects (client: ApiClient, logger: Logger): Promise<void> {
  const wanted: Array<[typeof RESOURCES.runtimeClasses | typeof RESOURCES.priorityClasses, object]> = [
    [RESOURCES.runtimeClasses, WASM_RUNTIME_CLASS], ...SYSTEM_PRIORITY_CLASSES.map(pc => [RESOURCES.priorityClasses, pc] as [typeof RESOURCES.priorityClasses, object])
  ]
  for (const [resource, obj] of wanted) {
    try {
      await client.resource(resource).create('', structuredClone(obj) as never)
    } catch (err) {
      if ((err as { code?: number }).code !== 409) logger.warn({ err, resource: resource.resource }, 'could not create a bootstrap object')
    }
  }
}
