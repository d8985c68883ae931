// Rules of workloads and services that Kubernetes checks in code: selectors matching templates, pod templates, ports.

import type { FieldError } from '../../schema/types.js'
import { invalid, required, duplicate, notSupported, index, child } from '../../schema/field-errors.js'
import type { Obj } from '../object-meta.js'
import { validatePodSpecAt } from './pod-validation.js'

interface LabelSelector { matchLabels?: Record<string, string>; matchExpressions?: Array<{ key: string; operator: string; values?: string[] }> }

/** Whether `labels` satisfy the selector (matchLabels and the four expression operators). */
export function selectorMatches (sel: LabelSelector, labels: Record<string, string>): boolean {
  for (const [k, v] of Object.entries(sel.matchLabels ?? {})) if (labels[k] !== v) return false
  for (const e of sel.matchExpressions ?? []) {
    const has = Object.prototype.hasOwnProperty.call(labels, e.key)
    const value = labels[e.key]
    switch (e.operator) {
      case 'In': if (!has || !(e.values ?? []).includes(value!)) return false; break
      case 'NotIn': if (has && (e.values ?? []).includes(value!)) return false; break
      case 'Exists': if (!has) return false; break
      case 'DoesNotExist': if (has) return false; break
      default: return false
    }
  }
  return true
}

function isEmptySelector (sel: LabelSelector): boolean {
  return Object.keys(sel.matchLabels ?? {}).length === 0 && (sel.matchExpressions ?? []).length === 0
}

/** Deployment, ReplicaSet, StatefulSet, DaemonSet: a non-empty selector that selects the template's labels, a valid template. */
export function validateReplicatedWorkload (obj: Obj): FieldError[] {
  const spec = (obj.spec ?? {}) as Obj
  const errs: FieldError[] = []
  const sel = spec.selector as LabelSelector | undefined
  const template = (spec.template ?? {}) as Obj
  const labels = (((template.metadata ?? {}) as Obj).labels ?? {}) as Record<string, string>
  if (sel === undefined || sel === null) errs.push(required('spec.selector'))
  else if (isEmptySelector(sel)) errs.push(invalid('spec.selector', sel, 'empty selector is invalid for deployment'))
  else if (!selectorMatches(sel, labels)) errs.push(invalid('spec.template.metadata.labels', labels, '`selector` does not match template `labels`'))
  if (typeof spec.replicas === 'number' && spec.replicas < 0) errs.push(invalid('spec.replicas', spec.replicas, 'must be greater than or equal to 0'))
  const podSpec = (template.spec ?? {}) as Obj
  errs.push(...validatePodSpecAt(podSpec, 'spec.template.spec'))
  const policy = podSpec.restartPolicy
  if (policy !== undefined && policy !== 'Always') errs.push(notSupported('spec.template.spec.restartPolicy', policy, ['Always']))
  return errs
}

/** Job: a valid template whose restartPolicy is OnFailure or Never. */
export function validateJob (obj: Obj): FieldError[] {
  const template = (((obj.spec ?? {}) as Obj).template ?? {}) as Obj
  const podSpec = (template.spec ?? {}) as Obj
  const errs = validatePodSpecAt(podSpec, 'spec.template.spec')
  const policy = podSpec.restartPolicy
  if (policy !== 'OnFailure' && policy !== 'Never') errs.push(notSupported('spec.template.spec.restartPolicy', policy ?? '', ['OnFailure', 'Never']))
  return errs
}

/** Service ports: required unless headless or ExternalName, in range, named when several, unique names. */
export function validateServicePorts (obj: Obj): FieldError[] {
  const spec = (obj.spec ?? {}) as Obj
  const errs: FieldError[] = []
  const ports = Array.isArray(spec.ports) ? spec.ports as Obj[] : []
  const type = spec.type ?? 'ClusterIP'
  if (ports.length === 0 && spec.clusterIP !== 'None' && type !== 'ExternalName') errs.push(required('spec.ports'))
  const names = new Set<string>()
  ports.forEach((p, i) => {
    const at = index('spec.ports', i)
    if (ports.length > 1 && (typeof p.name !== 'string' || p.name === '')) errs.push(required(child(at, 'name')))
    if (typeof p.name === 'string' && p.name !== '') {
      if (names.has(p.name)) errs.push(duplicate(child(at, 'name'), p.name))
      names.add(p.name)
    }
    if (typeof p.port !== 'number' || p.port < 1 || p.port > 65535) errs.push(invalid(child(at, 'port'), p.port ?? 0, 'must be between 1 and 65535, inclusive'))
  })
  return errs
}

/** Deployment, ReplicaSet, StatefulSet, DaemonSet: `spec.selector` is immutable in apps/v1. */
export function validateWorkloadUpdate (obj: Obj, old: Obj): FieldError[] {
  const sel = JSON.stringify(((obj.spec ?? {}) as Obj).selector ?? null)
  const before = JSON.stringify(((old.spec ?? {}) as Obj).selector ?? null)
  if (sel === before) return []
  return [invalid('spec.selector', ((obj.spec ?? {}) as Obj).selector ?? null, 'field is immutable')]
}

/** Job: selector, template labels and completions defaulted as the Job registry does; the selector is then immutable. */
export function defaultJob (obj: Obj, uid: string): void {
  const spec = (obj.spec ??= {}) as Obj
  const manual = spec.manualSelector === true
  const template = (spec.template ??= {}) as Obj
  const tmeta = (template.metadata ??= {}) as Obj
  const name = String(((obj.metadata ?? {}) as Obj).name ?? '')
  if (!manual) {
    const labels = { 'batch.orch.io/controller-uid': uid, 'batch.orch.io/job-name': name, 'controller-uid': uid, 'job-name': name }
    tmeta.labels = { ...(tmeta.labels as Record<string, string> | undefined), ...labels }
    spec.selector ??= { matchLabels: { 'batch.orch.io/controller-uid': uid } }
  }
  if (spec.completions === undefined && spec.parallelism === undefined) { spec.completions = 1; spec.parallelism = 1 }
  spec.parallelism ??= 1
  spec.backoffLimit ??= 6
  spec.suspend ??= false
  spec.completionMode ??= 'NonIndexed'
}
