// The scheduler's view of each node: the node, the pods on it (bound or assumed), what they request and the host ports they hold.

import type { Obj } from '../controllers/client/types.js'
import { add, emptyResources, nodeAllocatable, podRequests, type NodeCapacity, type Resources } from './resources.js'

export class NodeInfo {
  node?: Obj
  allocatable: NodeCapacity = { ...emptyResources(), pods: 0 }
  readonly requested: Resources = emptyResources()
  readonly pods = new Map<string, Obj>()
  readonly usedPorts = new Map<string, number>()

  constructor (readonly name: string) {}

  setNode (node: Obj): void {
    this.node = node
    this.allocatable = nodeAllocatable(node)
  }

  addPod (key: string, pod: Obj): void {
    if (this.pods.has(key)) this.removePod(key)
    this.pods.set(key, pod)
    add(this.requested, podRequests(pod))
    for (const p of hostPorts(pod)) this.usedPorts.set(p, (this.usedPorts.get(p) ?? 0) + 1)
  }

  removePod (key: string): void {
    const pod = this.pods.get(key)
    if (pod === undefined) return
    this.pods.delete(key)
    add(this.requested, podRequests(pod), -1)
    for (const p of hostPorts(pod)) {
      const n = (this.usedPorts.get(p) ?? 1) - 1
      if (n <= 0) this.usedPorts.delete(p)
      else this.usedPorts.set(p, n)
    }
  }
}

/** `protocol/hostIP/port` for every container port with a hostPort (hostIP 0.0.0.0 when unset). */
export function hostPorts (pod: Obj): string[] {
  const out: string[] = []
  for (const c of [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])] as Obj[]) {
    for (const p of (c.ports ?? []) as Obj[]) {
      if (p.hostPort === undefined || p.hostPort === 0) continue
      out.push(`${String(p.protocol ?? 'TCP')}/${String(p.hostIP ?? '0.0.0.0')}/${String(p.hostPort)}`)
    }
  }
  return out
}

/** Whether a wanted host port clashes with a used one (a wildcard hostIP clashes with every address). */
export function portConflicts (used: Map<string, number>, wanted: string): boolean {
  const [proto, ip, port] = wanted.split('/')
  for (const u of used.keys()) {
    const [uProto, uIp, uPort] = u.split('/')
    if (uProto !== proto || uPort !== port) continue
    if (ip === '0.0.0.0' || uIp === '0.0.0.0' || ip === uIp) return true
  }
  return false
}
