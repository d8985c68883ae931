// Static pod manifests (file or URL): decode, check, default and name them the way the kubelet does.

import { createHash } from 'node:crypto'
import { parseAllDocuments } from 'yaml'
import { ANNOTATION_CONFIG_HASH, ANNOTATION_CONFIG_SOURCE, type Pod, type PodSource } from './pod-types.js'

export class ManifestError extends Error {
  constructor (origin: string, why: string) {
    super(`invalid pod manifest ${origin}: ${why}`)
    this.name = 'ManifestError'
  }
}

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/

function isObject (v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v)
}

/** Decodes YAML or JSON text holding one Pod or a PodList (several YAML documents also allowed). */
export function decodeManifest (text: string, origin: string): Array<Record<string, unknown>> {
  const docs = parseAllDocuments(text, { uniqueKeys: true })
  const out: Array<Record<string, unknown>> = []
  const list = Array.isArray(docs) ? docs : [docs]
  for (const doc of list) {
    if (doc.errors.length > 0) throw new ManifestError(origin, doc.errors[0]!.message.split('\n')[0]!)
    const value: unknown = doc.toJS()
    if (value === null || value === undefined) continue
    if (!isObject(value)) throw new ManifestError(origin, 'a manifest must be a Pod object')
    if (value.kind === 'PodList' || value.kind === 'List') {
      if (!Array.isArray(value.items)) throw new ManifestError(origin, `${String(value.kind)}.items must be a list`)
      for (const item of value.items) {
        if (!isObject(item)) throw new ManifestError(origin, 'list items must be Pod objects')
        out.push(item)
      }
    } else {
      out.push(value)
    }
  }
  return out
}

function checkContainers (list: unknown, field: string, origin: string, names: Set<string>, required: boolean): void {
  if (list === undefined && !required) return
  if (!Array.isArray(list) || (required && list.length === 0)) throw new ManifestError(origin, `${field}: Required value`)
  list.forEach((c: unknown, i: number) => {
    const at = `${field}[${i}]`
    if (!isObject(c)) throw new ManifestError(origin, `${at}: must be an object`)
    if (typeof c.name !== 'string' || c.name === '') throw new ManifestError(origin, `${at}.name: Required value`)
    if (!DNS1123_LABEL.test(c.name) || c.name.length > 63) throw new ManifestError(origin, `${at}.name: Invalid value: "${c.name}": must be a DNS-1123 label`)
    if (names.has(c.name)) throw new ManifestError(origin, `${at}.name: Duplicate value: "${c.name}"`)
    names.add(c.name)
    if (typeof c.image !== 'string' || c.image.trim() === '') throw new ManifestError(origin, `${at}.image: Required value`)
    for (const key of ['command', 'args'] as const) {
      if (c[key] !== undefined && (!Array.isArray(c[key]) || !(c[key] as unknown[]).every(a => typeof a === 'string'))) {
        throw new ManifestError(origin, `${at}.${key}: must be a list of strings`)
      }
    }
  })
}

/** The checks the kubelet applies before it runs a static pod; throws ManifestError naming the field. */
export function checkPodManifest (obj: Record<string, unknown>, origin: string): void {
  if (obj.kind !== 'Pod') throw new ManifestError(origin, `kind must be Pod, not ${JSON.stringify(obj.kind ?? '')}`)
  if (obj.apiVersion !== 'v1') throw new ManifestError(origin, `apiVersion must be v1, not ${JSON.stringify(obj.apiVersion ?? '')}`)
  const meta = obj.metadata
  if (!isObject(meta)) throw new ManifestError(origin, 'metadata: Required value')
  if (typeof meta.name !== 'string' || meta.name === '') throw new ManifestError(origin, 'metadata.name: Required value')
  if (!DNS1123_SUBDOMAIN.test(meta.name) || meta.name.length > 253) throw new ManifestError(origin, `metadata.name: Invalid value: "${meta.name}": must be a lowercase RFC 1123 subdomain`)
  if (meta.namespace !== undefined && (typeof meta.namespace !== 'string' || !DNS1123_LABEL.test(meta.namespace))) {
    throw new ManifestError(origin, `metadata.namespace: Invalid value: ${JSON.stringify(meta.namespace)}: must be a DNS-1123 label`)
  }
  const spec = obj.spec
  if (!isObject(spec)) throw new ManifestError(origin, 'spec: Required value')
  const names = new Set<string>()
  checkContainers(spec.containers, 'spec.containers', origin, names, true)
  checkContainers(spec.initContainers, 'spec.initContainers', origin, names, false)
  const policy = spec.restartPolicy
  if (policy !== undefined && policy !== 'Always' && policy !== 'OnFailure' && policy !== 'Never') {
    throw new ManifestError(origin, `spec.restartPolicy: Unsupported value: ${JSON.stringify(policy)}: supported values: "Always", "OnFailure", "Never"`)
  }
  if (spec.volumes !== undefined && !Array.isArray(spec.volumes)) throw new ManifestError(origin, 'spec.volumes: must be a list')
}

/** imagePullPolicy default: Always for `:latest` or an untagged image, else IfNotPresent. */
export function defaultPullPolicy (image: string): 'Always' | 'IfNotPresent' {
  if (image.includes('@')) return 'IfNotPresent'
  const last = image.slice(image.lastIndexOf('/') + 1)
  const tag = last.includes(':') ? last.slice(last.indexOf(':') + 1) : ''
  return tag === '' || tag === 'latest' ? 'Always' : 'IfNotPresent'
}

/** Fills the defaults the API server would have filled for a pod it stored. */
export function defaultPod (pod: Pod): void {
  const s = pod.spec
  s.restartPolicy ??= 'Always'
  s.terminationGracePeriodSeconds ??= 30
  for (const c of [...(s.initContainers ?? []), ...s.containers]) c.imagePullPolicy ??= defaultPullPolicy(c.image)
}

/**
 * Turns a checked manifest into the static pod the orchlet runs: name suffixed with the node name,
 * namespace `default` when absent, a uid derived from the content (so an edit makes a new pod), bound
 * to this node and annotated with its source.
 */
export function toStaticPod (obj: Record<string, unknown>, source: Exclude<PodSource, 'api'>, origin: string, nodeName: string): Pod {
  checkPodManifest(obj, origin)
  const pod = structuredClone(obj) as unknown as Pod
  const meta = pod.metadata
  meta.namespace ||= 'default'
  meta.name = `${meta.name}-${nodeName}`
  const hash = createHash('md5').update(nodeName).update(origin).update(JSON.stringify(obj)).digest('hex')
  meta.uid = hash
  meta.annotations = { ...meta.annotations, [ANNOTATION_CONFIG_SOURCE]: source, [ANNOTATION_CONFIG_HASH]: hash }
  pod.spec.nodeName = nodeName
  defaultPod(pod)
  return pod
}
