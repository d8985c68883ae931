// The Pod rules Kubernetes checks in code, beyond what the schema says: names, images, volumes, mounts, updates.

import type { FieldError } from '../../schema/types.js'
import { duplicate, forbidden, index, invalid, required, child } from '../../schema/field-errors.js'
import { isDNS1123Label } from '../../schema/metadata.js'
import type { Obj } from '../object-meta.js'
import { cloneJson } from '../patch/json-pointer.js'

const ENV_NAME = /^[-._a-zA-Z][-._a-zA-Z0-9]*$/
const VOLUME_SOURCES = ['emptyDir', 'hostPath', 'configMap', 'secret', 'persistentVolumeClaim', 'projected', 'downwardAPI', 'nfs', 'csi', 'ephemeral', 'iscsi', 'local', 'image']

function list (v: unknown): Obj[] { return Array.isArray(v) ? v.filter((x): x is Obj => x !== null && typeof x === 'object') : [] }

function validateVolumes (spec: Obj, base: string, errs: FieldError[]): Set<string> {
  const names = new Set<string>()
  list(spec.volumes).forEach((v, i) => {
    const at = index(`${base}.volumes`, i)
    const name = v.name
    if (typeof name !== 'string' || name === '') errs.push(required(child(at, 'name')))
    else {
      for (const msg of isDNS1123Label(name)) errs.push(invalid(child(at, 'name'), name, msg))
      if (names.has(name)) errs.push(duplicate(child(at, 'name'), name))
      names.add(name)
    }
    const sources = VOLUME_SOURCES.filter(s => v[s] !== undefined && v[s] !== null)
    if (sources.length === 0) errs.push(required(at, 'must specify a volume type'))
    else if (sources.length > 1) errs.push(forbidden(child(at, sources[1]!), 'may not specify more than 1 volume type'))
  })
  return names
}

function validateContainer (c: Obj, at: string, volumes: Set<string>, names: Set<string>, errs: FieldError[]): void {
  const name = c.name
  if (typeof name !== 'string' || name === '') errs.push(required(child(at, 'name')))
  else {
    for (const msg of isDNS1123Label(name)) errs.push(invalid(child(at, 'name'), name, msg))
    if (names.has(name)) errs.push(duplicate(child(at, 'name'), name))
    names.add(name)
  }
  if (typeof c.image !== 'string' || c.image.trim() === '') errs.push(required(child(at, 'image')))
  else if (c.image !== c.image.trim()) errs.push(invalid(child(at, 'image'), c.image, 'must not have leading or trailing whitespace'))
  const paths = new Set<string>()
  list(c.volumeMounts).forEach((m, i) => {
    const mat = index(child(at, 'volumeMounts'), i)
    if (typeof m.name !== 'string' || m.name === '') errs.push(required(child(mat, 'name')))
    else if (!volumes.has(m.name)) errs.push({ type: 'FieldValueNotFound', field: child(mat, 'name'), message: `Not found: ${JSON.stringify(m.name)}` })
    if (typeof m.mountPath !== 'string' || m.mountPath === '') errs.push(required(child(mat, 'mountPath')))
    else {
      if (paths.has(m.mountPath)) errs.push(invalid(child(mat, 'mountPath'), m.mountPath, 'must be unique'))
      paths.add(m.mountPath)
    }
  })
  list(c.env).forEach((e, i) => {
    const eat = index(child(at, 'env'), i)
    if (typeof e.name !== 'string' || e.name === '') errs.push(required(child(eat, 'name')))
    else if (!ENV_NAME.test(e.name)) errs.push(invalid(child(eat, 'name'), e.name, "a valid environment variable name must consist of alphabetic characters, digits, '_', '-', or '.', and must not start with a digit (e.g. 'my.env-name',  or 'MY_ENV.NAME',  or 'MyEnvName1', regex used for validation is '[-._a-zA-Z][-._a-zA-Z0-9]*')"))
  })
  const portNames = new Set<string>()
  list(c.ports).forEach((p, i) => {
    const pat = index(child(at, 'ports'), i)
    const port = p.containerPort
    if (typeof port !== 'number' || port < 1 || port > 65535) errs.push(invalid(child(pat, 'containerPort'), port ?? 0, 'must be between 1 and 65535, inclusive'))
    if (typeof p.hostPort === 'number' && (p.hostPort < 0 || p.hostPort > 65535)) errs.push(invalid(child(pat, 'hostPort'), p.hostPort, 'must be between 1 and 65535, inclusive'))
    if (typeof p.name === 'string' && p.name !== '') {
      if (portNames.has(p.name)) errs.push(duplicate(child(pat, 'name'), p.name))
      portNames.add(p.name)
    }
  })
}

/** Kubernetes' ValidatePodSpec essentials for the pod spec at `base` (e.g. `spec.template.spec`). */
export function validatePodSpecAt (spec: Obj, base: string): FieldError[] {
  const errs: FieldError[] = []
  const volumes = validateVolumes(spec, base, errs)
  const names = new Set<string>()
  list(spec.initContainers).forEach((c, i) => validateContainer(c, index(`${base}.initContainers`, i), volumes, names, errs))
  list(spec.containers).forEach((c, i) => validateContainer(c, index(`${base}.containers`, i), volumes, names, errs))
  const deadline = spec.activeDeadlineSeconds
  if (typeof deadline === 'number' && deadline <= 0) errs.push(invalid(`${base}.activeDeadlineSeconds`, deadline, 'must be between 1 and 2147483647, inclusive'))
  const grace = spec.terminationGracePeriodSeconds
  if (typeof grace === 'number' && grace < 0) errs.push(invalid(`${base}.terminationGracePeriodSeconds`, grace, 'must be greater than or equal to 0'))
  return errs
}

/** A Pod's spec, with Kubernetes' field paths and wording. */
export function validatePodSpec (obj: Obj): FieldError[] {
  return validatePodSpecAt((obj.spec ?? {}) as Obj, 'spec')
}

const UPDATE_FORBIDDEN = 'pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)'

/** The spec with the fields a pod update may change blanked out, for comparison. */
function frozen (spec: Obj): string {
  const copy = cloneJson(spec)
  delete copy.activeDeadlineSeconds
  delete copy.tolerations
  delete copy.terminationGracePeriodSeconds
  for (const key of ['containers', 'initContainers']) for (const c of list(copy[key])) delete c.image
  return stable(copy)
}

/** JSON with object keys sorted at every level, so key order does not count as a change. */
function stable (v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(stable).join(',')}]`
  if (v !== null && typeof v === 'object') {
    return `{${Object.keys(v).sort().map(k => `${JSON.stringify(k)}:${stable((v as Obj)[k])}`).join(',')}}`
  }
  return JSON.stringify(v)
}

/** Pod specs are immutable but for images, deadlines and added tolerations (Kubernetes' ValidatePodUpdate). */
export function validatePodUpdate (obj: Obj, old: Obj, internal = false): FieldError[] {
  const spec = (obj.spec ?? {}) as Obj
  let before = (old.spec ?? {}) as Obj
  // Binding an unscheduled pod is the one spec change the binding subresource makes.
  if (internal && (before.nodeName ?? '') === '' && typeof spec.nodeName === 'string') before = { ...before, nodeName: spec.nodeName }
  if (frozen(spec) !== frozen(before)) return [forbidden('spec', UPDATE_FORBIDDEN)]
  const oldTolerations = list(before.tolerations).map(t => JSON.stringify(t))
  const newTolerations = new Set(list(spec.tolerations).map(t => JSON.stringify(t)))
  if (oldTolerations.some(t => !newTolerations.has(t))) return [forbidden('spec.tolerations', 'existing toleration can not be modified except its tolerationSeconds')]
  return []
}
