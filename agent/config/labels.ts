// --node-labels rules: valid keys and values, and which labels in the reserved namespaces the orchlet may set itself.

import { ValueError } from './errors.js'
import { checkLabelValue, checkQualifiedName } from './resources.js'

/** Domains whose labels are reserved for the platform (orch.io is the product's spelling of kubernetes.io). */
const RESERVED_DOMAINS = ['orch.io', 'kubernetes.io', 'k8s.io']
/** Domains the allowed names below are spelled in. */
const LABEL_DOMAINS = ['orch.io', 'kubernetes.io']

function allowedKeys (d: string): string[] {
  return [
    `${d}/hostname`, `${d}/os`, `${d}/arch`,
    `topology.${d}/region`, `topology.${d}/zone`,
    `failure-domain.beta.${d}/region`, `failure-domain.beta.${d}/zone`,
    `beta.${d}/instance-type`, `node.${d}/instance-type`, `beta.${d}/os`, `beta.${d}/arch`,
    `node.${d}/windows-build`
  ]
}

/** Label keys in a reserved namespace that the orchlet may set. */
export const ORCHLET_LABELS: readonly string[] = LABEL_DOMAINS.flatMap(allowedKeys)
/** Namespaces (and their subdomains) in which the orchlet may set any label. */
export const ORCHLET_LABEL_NAMESPACES: readonly string[] = LABEL_DOMAINS.flatMap(d => [`orchlet.${d}`, `node.${d}`, ...(d === 'kubernetes.io' ? ['kubelet.kubernetes.io'] : [])])

function namespaceOf (key: string): string {
  const slash = key.indexOf('/')
  return slash < 0 ? '' : key.slice(0, slash)
}

function within (ns: string, domain: string): boolean {
  return ns === domain || ns.endsWith(`.${domain}`)
}

export function isReservedLabel (key: string): boolean {
  const ns = namespaceOf(key)
  return RESERVED_DOMAINS.some(d => within(ns, d))
}

export function isOrchletLabel (key: string): boolean {
  if (ORCHLET_LABELS.includes(key)) return true
  const ns = namespaceOf(key)
  return ORCHLET_LABEL_NAMESPACES.some(d => within(ns, d))
}

/** Throws a ValueError for the first bad label. */
export function checkNodeLabels (labels: Record<string, string>): void {
  for (const [key, value] of Object.entries(labels)) {
    checkQualifiedName(key)
    checkLabelValue(key, value)
  }
  const unknown = Object.keys(labels).filter(key => isReservedLabel(key) && !isOrchletLabel(key)).sort()
  if (unknown.length > 0) {
    throw new ValueError(`labels in the orch.io and k8s.io namespaces must begin with an allowed prefix (${ORCHLET_LABEL_NAMESPACES.join(', ')}) or be in the allowed set (${ORCHLET_LABELS.join(', ')}); not allowed: ${unknown.join(', ')}`)
  }
}
