// What the Endpoints and EndpointSlice controllers share: the pods a Service selects and each pod's resolved ports.

import type { Obj } from '../client/types.js'
import { mapSelectorMatches } from '../labels.js'
import { isPodReady } from '../pods.js'

export interface Backend {
  pod: Obj
  ip: string
  ready: boolean
  terminating: boolean
  /** The Service's ports with targetPort resolved against this pod (a named port the pod lacks is left out). */
  ports: Array<{ name?: string, port: number, protocol: string, appProtocol?: string }>
}

/** A Service's targetPort (number, or a container port name) on one pod. */
function resolvePort (svcPort: Obj, pod: Obj): number | undefined {
  const target = svcPort.targetPort ?? svcPort.port
  if (typeof target === 'number') return target
  if (/^\d+$/.test(String(target))) return Number(target)
  for (const c of (pod.spec?.containers ?? []) as Obj[]) {
    for (const p of (c.ports ?? []) as Obj[]) if (p.name === target && (p.protocol ?? 'TCP') === (svcPort.protocol ?? 'TCP')) return p.containerPort
  }
  return undefined
}

/** The pods `svc` selects that have an IP and have not finished; terminating ones only when they are still serving. */
export function backendsOf (svc: Obj, pods: Obj[]): Backend[] {
  const selector = svc.spec?.selector as Record<string, string> | undefined
  const out: Backend[] = []
  for (const pod of pods) {
    if (!mapSelectorMatches(selector, pod.metadata?.labels)) continue
    const ip = pod.status?.podIP
    if (typeof ip !== 'string' || ip === '') continue
    if (pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed') continue
    const terminating = (pod.metadata?.deletionTimestamp ?? null) !== null
    const ports: Backend['ports'] = []
    for (const sp of (svc.spec?.ports ?? []) as Obj[]) {
      const port = resolvePort(sp, pod)
      if (port === undefined) continue
      ports.push({ ...(sp.name !== undefined && sp.name !== '' ? { name: sp.name } : {}), port, protocol: sp.protocol ?? 'TCP', ...(sp.appProtocol !== undefined ? { appProtocol: sp.appProtocol } : {}) })
    }
    out.push({ pod, ip, ready: isPodReady(pod) && !terminating, terminating, ports })
  }
  return out.sort((a, b) => a.ip.localeCompare(b.ip) || String(a.pod.metadata.name).localeCompare(String(b.pod.metadata.name)))
}

export function targetRef (pod: Obj): Obj {
  return { kind: 'Pod', namespace: pod.metadata.namespace, name: pod.metadata.name, uid: pod.metadata.uid }
}
