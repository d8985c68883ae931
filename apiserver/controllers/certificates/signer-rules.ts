// The built-in signers and what each accepts (Kubernetes' kubelet-serving, kube-apiserver-client-kubelet and
// kube-apiserver-client rules, renamed orch.io/...): a request that breaks them is marked Failed, not signed.

import type { ParsedCsr } from '../../pki/csr.js'

export const ORCHLET_SERVING = 'orch.io/orchlet-serving'
export const APISERVER_CLIENT_ORCHLET = 'orch.io/orch-apiserver-client-orchlet'
export const APISERVER_CLIENT = 'orch.io/orch-apiserver-client'
export const LEGACY_UNKNOWN = 'orch.io/legacy-unknown'

export const BUILTIN_SIGNERS = [ORCHLET_SERVING, APISERVER_CLIENT_ORCHLET, APISERVER_CLIENT, LEGACY_UNKNOWN] as const

const NODE_PREFIX = 'system:node:'
const NODES_GROUP = 'system:nodes'

/** Usage sets an orchlet's certificate must name exactly (with or without key encipherment, which only RSA keys use). */
const ORCHLET_CLIENT_USAGES = ['client auth', 'digital signature', 'key encipherment']
const ORCHLET_SERVING_USAGES = ['digital signature', 'key encipherment', 'server auth']

const sameSet = (a: string[], b: string[]): boolean => {
  const s = new Set(a)
  return s.size === b.length && b.every(x => s.has(x))
}

function usagesMatch (usages: string[], required: string[]): boolean {
  return sameSet(usages, required) || sameSet(usages, required.filter(u => u !== 'key encipherment'))
}

/** Go's `%v` of a sorted usage list: `[client auth digital signature key encipherment]`. */
const goList = (xs: string[]): string => `[${xs.join(' ')}]`

const onlySystemNodes = (csr: ParsedCsr): boolean => csr.organizations.length === 1 && csr.organizations[0] === NODES_GROUP

/** ValidateKubeletClientCSR: O=[system:nodes], CN system:node:<name>, no SANs, the client usages. */
export function orchletClientProblem (csr: ParsedCsr, usages: string[]): string | undefined {
  if (!onlySystemNodes(csr)) return 'subject organization is not system:nodes'
  if (csr.dnsNames.length > 0) return 'DNS subjectAltNames are not allowed'
  if (csr.emailAddresses.length > 0) return 'Email subjectAltNames are not allowed'
  if (csr.ipAddresses.length > 0) return 'IP subjectAltNames are not allowed'
  if (csr.uris.length > 0) return 'URI subjectAltNames are not allowed'
  if (!csr.commonName.startsWith(NODE_PREFIX)) return 'subject common name does not begin with system:node:'
  if (!usagesMatch(usages, ORCHLET_CLIENT_USAGES)) return `usages did not match ${goList(ORCHLET_CLIENT_USAGES)}`
  return undefined
}

/** ValidateKubeletServingCSR: the serving usages, O=[system:nodes], DNS or IP SANs only, CN system:node:<name>. */
export function orchletServingProblem (csr: ParsedCsr, usages: string[]): string | undefined {
  if (!usagesMatch(usages, ORCHLET_SERVING_USAGES)) return `usages did not match ${goList(ORCHLET_SERVING_USAGES)}`
  if (!onlySystemNodes(csr)) return 'subject organization is not system:nodes'
  if (csr.dnsNames.length === 0 && csr.ipAddresses.length === 0) return 'DNS or IP subjectAltName is required'
  if (csr.emailAddresses.length > 0) return 'Email subjectAltNames are not allowed'
  if (csr.uris.length > 0) return 'URI subjectAltNames are not allowed'
  if (!csr.commonName.startsWith(NODE_PREFIX)) return 'subject common name does not begin with system:node:'
  return undefined
}

/** validAPIServerClientUsages: client auth required; digital signature and key encipherment optional; nothing else. */
export function apiserverClientProblem (_csr: ParsedCsr, usages: string[]): string | undefined {
  for (const u of usages) {
    if (u !== 'client auth' && u !== 'digital signature' && u !== 'key encipherment') return `invalid usage for client certificate: ${u}`
  }
  if (!usages.includes('client auth')) return 'missing required usage for client certificate: client auth'
  return undefined
}

/**
 * What the signer `signerName` says of a request: `undefined` for a signer orch does not run (left alone), else
 * `{ problem }` with the reason it must fail, or no problem when it may be signed.
 */
export function signerVerdict (signerName: string, csr: ParsedCsr, usages: string[]): { problem?: string } | undefined {
  switch (signerName) {
    case ORCHLET_SERVING: return { problem: orchletServingProblem(csr, usages) }
    case APISERVER_CLIENT_ORCHLET: return { problem: orchletClientProblem(csr, usages) }
    case APISERVER_CLIENT: return { problem: apiserverClientProblem(csr, usages) }
    case LEGACY_UNKNOWN: return {}
    default: return undefined
  }
}

/** IsKubeletClientCSR: whether a request is an orchlet's client certificate request (the approver's recognizer). */
export function isOrchletClientCsr (csr: ParsedCsr, usages: string[]): boolean {
  return orchletClientProblem(csr, usages) === undefined
}

export interface Validity { notBefore: Date; notAfter: Date }

export const BACKDATE_MS = 5 * 60_000
const SHORT_MS = 8 * 3600_000
/** ClusterSigningDuration's default. */
export const DEFAULT_SIGNING_DURATION_MS = 365 * 24 * 3600_000

/**
 * The certificate's validity (PermissiveSigningPolicy): backdated 5 minutes; lasting min(signing duration,
 * expirationSeconds), the end backdated too unless that is under 8 hours; never past the CA's own end.
 */
export function validityFor (now: number, maxDurationMs: number, expirationSeconds: number | undefined, caNotAfter: Date): Validity {
  let ttl = maxDurationMs
  if (expirationSeconds !== undefined && expirationSeconds * 1000 < ttl) ttl = expirationSeconds * 1000
  const notBefore = now - BACKDATE_MS
  let notAfter = ttl < SHORT_MS ? now + ttl : now + ttl - BACKDATE_MS
  if (notAfter >= caNotAfter.getTime()) notAfter = caNotAfter.getTime()
  if (notBefore >= caNotAfter.getTime() || now >= caNotAfter.getTime()) throw new Error(`the signer has expired: NotAfter=${caNotAfter.toISOString()}`)
  return { notBefore: new Date(notBefore), notAfter: new Date(notAfter) }
}
