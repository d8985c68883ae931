// Where the pod template of each pod controller lives, and what counts as a significant pod update.

import { obj, type Obj, type PodView } from './pod-view.js'

const TEMPLATE_PATHS: Record<string, string[]> = {
  '/ReplicationController': ['spec', 'template'],
  '/PodTemplate': ['template'],
  'apps/Deployment': ['spec', 'template'],
  'apps/ReplicaSet': ['spec', 'template'],
  'apps/StatefulSet': ['spec', 'template'],
  'apps/DaemonSet': ['spec', 'template'],
  'batch/Job': ['spec', 'template'],
  'batch/CronJob': ['spec', 'jobTemplate', 'spec', 'template']
}

/** Groups as stored may be spelled `apps` or with orch's suffix; both name the same kinds. */
function baseGroup (group: string): string {
  return group.replace(/\.orch\.io$/, '').replace(/\.k8s\.io$/, '')
}

export function isPodController (group: string, kind: string): boolean {
  return TEMPLATE_PATHS[`${baseGroup(group)}/${kind}`] !== undefined
}

/** The pod template of a controller object, or undefined when it has none. */
export function podTemplateOf (group: string, kind: string, o: Obj | undefined): PodView | undefined {
  const path = TEMPLATE_PATHS[`${baseGroup(group)}/${kind}`]
  if (path === undefined || o === undefined) return undefined
  let cur: unknown = o
  for (const k of path) {
    if (typeof cur !== 'object' || cur === null) return undefined
    cur = (cur as Obj)[k]
  }
  if (typeof cur !== 'object' || cur === null) return undefined
  return { metadata: obj((cur as Obj).metadata), spec: obj((cur as Obj).spec) }
}

export function podViewOf (pod: Obj): PodView {
  return { metadata: obj(pod.metadata), spec: obj(pod.spec) }
}

const SECURITY_ANNOTATION = /^(seccomp\.security\.alpha\.kubernetes\.io\/pod|container\.seccomp\.security\.alpha\.kubernetes\.io\/|container\.apparmor\.security\.beta\.kubernetes\.io\/)/

function securityAnnotations (p: PodView): string {
  const a = obj(p.metadata.annotations)
  return JSON.stringify(Object.keys(a).filter(k => SECURITY_ANNOTATION.test(k)).sort().map(k => [k, a[k]]))
}

/** Kubernetes re-evaluates an update only when the spec or the security annotations changed (not for labels etc.). */
export function isSignificantUpdate (now: PodView, old: PodView | undefined): boolean {
  if (old === undefined) return true
  return JSON.stringify(now.spec) !== JSON.stringify(old.spec) || securityAnnotations(now) !== securityAnnotations(old)
}
