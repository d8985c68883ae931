// The Node authorizer: nodes read only the secrets, configmaps, PVCs and service-account tokens their pods need, their own lease,
// and otherwise what system:node's rules grant (writes are narrowed further by NodeRestriction).

import type { Registry } from '../../registry/types.js'
import type { Logger } from '../../registry/core.js'
import { inProcessClient } from '../../controllers/client/in-process.js'
import { SharedInformer } from '../../controllers/informer.js'
import { systemControllerClock, type ControllerClock } from '../../controllers/clock.js'
import { RESOURCES } from '../../controllers/client/types.js'
import { upstreamGroup } from '../../schema/builtin/upstream-groups.js'
import type { Authorizer } from '../types.js'
import { ruleAllows } from '../rbac/rules.js'
import { nodeRules } from '../rbac/bootstrap-policy.js'
import { PodGraph, podReferences } from './pod-graph.js'
import { nodeName } from './node-identity.js'
import { ALLOW, claim, lease, noOpinion, readNamespaced, token, volume, type NodeRelations } from './node-checks.js'
import { createNodeRestriction } from './node-restriction.js'
import type { WriteAdmission } from '../../registry/admission.js'

export interface NodeAuthorizationOptions {
  registry: Registry
  logger: Logger
  clock?: ControllerClock
}

export interface NodeAuthorization {
  authorizer: Authorizer
  /** NodeRestriction, for the registry's `admission` list. */
  admission: WriteAdmission
  /** Resolves once the pods have been listed into the graph. */
  ready(): Promise<void>
  stop(): void
}

const CLAIMS = { group: '', version: 'v1', resource: 'persistentvolumeclaims', namespaced: true } as const

export function createNodeAuthorization (o: NodeAuthorizationOptions): NodeAuthorization {
  const client = inProcessClient(o.registry, 'node-authorizer', 'system:apiserver')
  const pods = new SharedInformer(RESOURCES.pods, client, o.clock ?? systemControllerClock, o.logger)
  const graph = new PodGraph()
  pods.addEventHandler({
    add: p => { graph.setPod(p) },
    update: (_, p) => { graph.setPod(p) },
    delete: p => { graph.deletePod(`${String(p.metadata?.namespace ?? '')}/${String(p.metadata?.name ?? '')}`) }
  })
  pods.start()
  const synced = pods.waitForSync()
  const staticRules = nodeRules()

  // The graph follows the pod watch; when it says no, the node's pods are read from storage, so a pod bound a
  // moment ago already counts (and volumes, rarely asked for, are always read).
  const nodePods = async (node: string, namespace: string): Promise<Array<Record<string, any>>> => // eslint-disable-line @typescript-eslint/no-explicit-any
    (await client.resource(RESOURCES.pods).list(namespace, { fieldSelector: `spec.nodeName=${node}` })).items
  const rel: NodeRelations = {
    async references (node, kind, namespace, name) {
      await synced
      if (graph.has(node, kind, namespace, name)) return true
      return (await nodePods(node, namespace)).some(p => podReferences(p).some(r => r.kind === kind && r.name === name))
    },
    async usesVolume (node, volumeName) {
      for (const p of await nodePods(node, '')) {
        for (const r of podReferences(p)) {
          if (r.kind !== 'persistentvolumeclaim') continue
          if ((await client.resource(CLAIMS).get(String(p.metadata?.namespace ?? ''), r.name))?.spec?.volumeName === volumeName) return true
        }
      }
      return false
    }
  }

  const authorizer: Authorizer = {
    async authorize (a) {
      const node = nodeName(a.user)
      if (node === undefined) return noOpinion('')
      if (node === '') return noOpinion('unknown node')
      if (a.resourceRequest) {
        switch (`${upstreamGroup(a.apiGroup) ?? a.apiGroup}/${a.resource}`) {
          case '/secrets': return await readNamespaced(rel, node, 'secret', a)
          case '/configmaps': return await readNamespaced(rel, node, 'configmap', a)
          case '/persistentvolumeclaims': return await claim(rel, node, a)
          case '/persistentvolumes': return await volume(rel, node, a)
          case '/serviceaccounts': return await token(rel, node, a)
          case 'coordination.k8s.io/leases': return lease(node, a)
        }
      }
      return staticRules.some(r => ruleAllows(a, r)) ? ALLOW : noOpinion('')
    }
  }

  return {
    authorizer,
    admission: createNodeRestriction(),
    ready: async () => { await synced },
    stop: () => { pods.stop() }
  }
}
