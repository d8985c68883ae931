// NodeRestriction: a node writes only its own Node (not its restricted labels or taints), its own lease, mirror pods bound to it,
// and the status of pods bound to it; it deletes only pods bound to it.

import { forbidden } from '../../errors/status-error.js'
import type { WriteAdmission, WriteAttributes } from '../../registry/admission.js'
import { upstreamGroup } from '../../schema/builtin/upstream-groups.js'
import { NODE_LEASE_NAMESPACES, nodeName } from './node-identity.js'
import { podReferences, type Obj } from './pod-graph.js'
import { isMirrorPod, MIRROR_ANNOTATIONS } from '../../registry/mirror-pods.js'

const RESTRICTED_LABEL_PREFIXES = ['node-restriction.kubernetes.io/', 'node-restriction.orch.io/']

class Refusal extends Error {}
const refuse = (why: string): never => { throw new Refusal(why) }

const isRestrictedLabel = (key: string): boolean => RESTRICTED_LABEL_PREFIXES.some(p => key.startsWith(p))
const labelsOf = (o: Obj | undefined): Record<string, string> => (o?.metadata?.labels ?? {}) as Record<string, string>

function admitMirrorPod (node: string, pod: Obj): void {
  if (!isMirrorPod(pod)) {
    refuse(`pod does not have "${MIRROR_ANNOTATIONS[0]}" annotation, node "${node}" can only create mirror pods`)
  }
  if (pod.spec?.nodeName !== node) refuse(`node "${node}" can only create pods with spec.nodeName set to itself`)
  const owners = (pod.metadata?.ownerReferences ?? []) as Obj[]
  if (owners.length > 1) refuse(`node "${node}" can only create pods with a single owner reference set to itself`)
  if (owners.length === 1 && (owners[0]!.kind !== 'Node' || owners[0]!.name !== node)) {
    refuse(`node "${node}" can only create pods with an owner reference set to itself`)
  }
  const names: Record<string, string> = { secret: 'secrets', configmap: 'configmaps', persistentvolumeclaim: 'persistentvolumeclaims' }
  for (const r of podReferences(pod)) {
    if (r.kind === 'serviceaccount') continue
    refuse(`node "${node}" can not create pods that reference ${names[r.kind]}`)
  }
}

function admitPod (node: string, a: WriteAttributes): void {
  if (a.subresource === 'status') {
    if ((a.oldObject as Obj | undefined)?.spec?.nodeName !== node) refuse(`node "${node}" can only update pod status for pods with spec.nodeName set to itself`)
    return
  }
  switch (a.operation) {
    case 'CREATE': admitMirrorPod(node, a.object); return
    case 'DELETE':
      if ((a.object as Obj).spec?.nodeName !== node) refuse(`node "${node}" can only delete pods with spec.nodeName set to itself`)
      return
    default: refuse(`unexpected operation "${a.operation}", node "${node}" can only create and delete mirror pods`)
  }
}

function admitNode (node: string, a: WriteAttributes): void {
  if (a.name !== node) refuse(`node "${node}" is not allowed to modify node "${a.name}"`)
  if (a.operation === 'CREATE') {
    const bad = Object.keys(labelsOf(a.object)).filter(isRestrictedLabel).sort()
    if (bad.length > 0) refuse(`node "${node}" is not allowed to set the following labels: ${bad.join(', ')}`)
    return
  }
  if (a.operation !== 'UPDATE') return
  const now = labelsOf(a.object)
  const before = labelsOf(a.oldObject)
  const changed = [...new Set([...Object.keys(now), ...Object.keys(before)])].filter(k => isRestrictedLabel(k) && now[k] !== before[k]).sort()
  if (changed.length > 0) refuse(`node "${node}" is not allowed to modify labels: ${changed.join(', ')}`)
  if (a.subresource === '' && JSON.stringify((a.object as Obj).spec?.taints ?? []) !== JSON.stringify((a.oldObject as Obj | undefined)?.spec?.taints ?? [])) {
    refuse(`node "${node}" is not allowed to modify taints`)
  }
}

function admitLease (node: string, a: WriteAttributes): void {
  if (!NODE_LEASE_NAMESPACES.includes(a.namespace)) refuse(`can only access leases in the ${NODE_LEASE_NAMESPACES.map(n => JSON.stringify(n)).join(' or ')} namespace`)
  if (a.name !== node) refuse('can only access node lease with the same name as the requesting node')
}

/** The NodeRestriction check for the registry's `admission` list; it applies only to writes by nodes. */
export function createNodeRestriction (): WriteAdmission {
  return {
    async admit (a) {
      const node = nodeName(a.ctx.user)
      if (node === undefined) return
      const qr = { group: a.definition.group, resource: a.definition.plural }
      try {
        if (node === '') refuse(`could not determine node from user "${a.ctx.user.username}"`)
        const group = upstreamGroup(a.definition.storageGroup ?? a.definition.group) ?? a.definition.group
        if (group === '' && a.definition.plural === 'pods') admitPod(node, a)
        else if (group === '' && a.definition.plural === 'nodes') admitNode(node, a)
        else if (group === 'coordination.k8s.io' && a.definition.plural === 'leases') admitLease(node, a)
      } catch (err) {
        if (err instanceof Refusal) throw forbidden(qr, a.name, err.message)
        throw err
      }
    }
  }
}
