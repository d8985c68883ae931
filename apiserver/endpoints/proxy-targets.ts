// Where a proxy request goes: the orchlet of a node, a pod's IP and port, or a ready endpoint of a service's port.
//
// Names follow Kubernetes' proxy subresources: `nodes/{name[:port]}`, `pods/{[scheme:]name[:port]}`,
// `services/{[scheme:]name[:port]}` (a service port's name or number).

import { badRequest, StatusError } from '../errors/status-error.js'
import { nodeEndpoint } from './pod-log.js'

export interface ProxyTarget { scheme: 'http' | 'https'; host: string; port: number }

/** `[scheme:]name[:port]` split; a scheme other than http/https is 400. */
export function splitProxyName (raw: string, allowScheme: boolean): { scheme?: 'http' | 'https'; name: string; port: string } {
  const parts = raw.split(':')
  let scheme: 'http' | 'https' | undefined
  if (allowScheme && parts.length === 3) {
    const s = parts.shift()!
    if (s !== 'http' && s !== 'https') throw badRequest(`invalid scheme "${s}": only http and https are proxied`)
    scheme = s
  } else if (allowScheme && parts.length === 2 && (parts[0] === 'http' || parts[0] === 'https')) {
    scheme = parts.shift() as 'http' | 'https'
  }
  if (parts.length > 2) throw badRequest(`invalid proxy name "${raw}"`)
  return { scheme, name: parts[0] ?? '', port: parts[1] ?? '' }
}

function hostOf (host: string): string { return host.includes(':') ? `[${host}]` : host }

export function targetUrl (t: ProxyTarget, path: string, search: string): string {
  return `${t.scheme}://${hostOf(t.host)}:${t.port}${path === '' ? '/' : path}${search}`
}

function portNumber (port: string, what: string): number | undefined {
  if (port === '') return undefined
  if (!/^\d+$/.test(port)) return undefined
  const n = Number(port)
  if (n < 1 || n > 65535) throw badRequest(`invalid port ${port} for ${what}`)
  return n
}

/** The orchlet's HTTPS server; a `:port` replaces the published one. */
export function nodeTarget (node: Record<string, unknown>, port: string): ProxyTarget {
  const ep = nodeEndpoint(node)
  return { scheme: 'https', host: ep.host, port: portNumber(port, 'node') ?? ep.port }
}

interface PodShape {
  metadata?: { name?: string }
  spec?: { containers?: Array<{ ports?: Array<{ name?: string; containerPort?: number }> }> }
  status?: { podIP?: string }
}

/** The pod's IP and the port: a number, a named container port, or 80 when none is given (as Kubernetes). */
export function podTarget (pod: PodShape, scheme: 'http' | 'https' | undefined, port: string): ProxyTarget {
  const name = pod.metadata?.name ?? ''
  const ip = pod.status?.podIP
  if (ip === undefined || ip === '') throw badRequest(`address not allowed: pod ${name} has no IP yet`)
  let n = portNumber(port, `pod ${name}`)
  if (n === undefined && port !== '') {
    n = pod.spec?.containers?.flatMap(c => c.ports ?? []).find(p => p.name === port)?.containerPort
    if (n === undefined) throw badRequest(`no port named "${port}" in pod ${name}`)
  }
  return { scheme: scheme ?? 'http', host: ip, port: n ?? 80 }
}

interface ServiceShape {
  metadata?: { name?: string }
  spec?: { ports?: Array<{ name?: string; port?: number }> }
}
interface EndpointsShape {
  subsets?: Array<{ addresses?: Array<{ ip: string }>; ports?: Array<{ name?: string; port: number }> }>
}

/**
 * A ready endpoint of the service's port, picked at random among the ready addresses: the port is a service
 * port's name or number (the only port when none is given); its endpoints port has the same name.
 */
export function serviceTarget (svc: ServiceShape, eps: EndpointsShape | undefined, scheme: 'http' | 'https' | undefined, port: string, random: () => number): ProxyTarget {
  const name = svc.metadata?.name ?? ''
  const ports = svc.spec?.ports ?? []
  const num = /^\d+$/.test(port) ? Number(port) : undefined
  const sp = port === '' ? (ports.length === 1 ? ports[0] : ports.find(p => (p.name ?? '') === '')) : ports.find(p => p.name === port || (num !== undefined && p.port === num))
  if (sp === undefined) throw new StatusError(503, 'ServiceUnavailable', `no endpoints available for service "${port === '' ? name : `${name}:${port}`}"`)
  const candidates: ProxyTarget[] = []
  for (const ss of eps?.subsets ?? []) {
    const ep = (ss.ports ?? []).find(p => (p.name ?? '') === (sp.name ?? ''))
    if (ep === undefined) continue
    for (const a of ss.addresses ?? []) candidates.push({ scheme: scheme ?? 'http', host: a.ip, port: ep.port })
  }
  if (candidates.length === 0) throw new StatusError(503, 'ServiceUnavailable', `no endpoints available for service "${name}"`)
  return candidates[Math.floor(random() * candidates.length) % candidates.length]!
}
