// A pod's resolver configuration (CRI DNSConfig), as the v1.29 kubelet forms it: dnsPolicy ClusterFirst,
// ClusterFirstWithHostNet, Default and None from --cluster-dns, --cluster-domain and --resolv-conf, then the pod's
// own spec.dnsConfig merged in, then cut to the resolver's limits.

import { readFileSync } from 'node:fs'
import type { Pod } from './pod-types.js'

export interface DnsConfig { servers: string[]; searches: string[]; options: string[] }

export interface DnsSettings {
  clusterDNS: string[]
  clusterDomain: string
  /** --resolv-conf; '' means none: pods with dnsPolicy Default resolve through localhost only. */
  resolvConf: string
  /** The node's IPs (for the localhost server of the empty --resolv-conf case). */
  nodeIPs: string[]
}

/** glibc's limits, as the kubelet applies them. */
export const MAX_NAMESERVERS = 3
export const MAX_SEARCH_PATHS = 32
export const MAX_SEARCH_CHARS = 2048

/** The `nameserver`, `search` and `options` lines of a resolv.conf (the last search line wins, as in glibc). */
export function parseResolvConf (text: string): DnsConfig {
  const out: DnsConfig = { servers: [], searches: [], options: [] }
  for (const raw of text.split('\n')) {
    const line = raw.replace(/[#;].*$/, '').trim()
    const [key, ...fields] = line.split(/\s+/)
    if (key === 'nameserver' && fields[0] !== undefined) out.servers.push(fields[0])
    else if (key === 'search') out.searches = fields.map(f => f.endsWith('.') && f !== '.' ? f.slice(0, -1) : f)
    else if (key === 'options') out.options.push(...fields)
  }
  return out
}

const unique = (xs: string[]): string[] => [...new Set(xs)]

/** Options by name; the pod's value for a name replaces the inherited one. */
function mergeOptions (base: string[], pod: Array<{ name?: string; value?: string }>): string[] {
  const byName = new Map<string, string>()
  for (const o of base) byName.set(o.split(':')[0]!, o)
  for (const o of pod) if (o.name) byName.set(o.name, o.value === undefined ? o.name : `${o.name}:${o.value}`)
  return [...byName.values()]
}

type DnsType = 'cluster' | 'host' | 'none'

/** The kubelet's getPodDNSType; `cluster` without --cluster-dns falls back to `host` (reported by the caller). */
export function podDnsType (pod: Pod, clusterDNS: string[]): { type: DnsType; missingClusterDNS: boolean } {
  const spec = pod.spec as Pod['spec'] & { dnsPolicy?: string }
  const policy = spec.dnsPolicy ?? 'ClusterFirst'
  let type: DnsType = 'host'
  if (policy === 'None') type = 'none'
  else if (policy === 'ClusterFirstWithHostNet' || (policy === 'ClusterFirst' && spec.hostNetwork !== true)) type = 'cluster'
  if (type === 'cluster' && clusterDNS.length === 0) return { type: 'host', missingClusterDNS: true }
  return { type, missingClusterDNS: false }
}

/** The sandbox's DNSConfig; `hostResolv` is the parsed --resolv-conf (read by the caller, once per sandbox). */
export function podDnsConfig (pod: Pod, s: DnsSettings, hostResolv: DnsConfig): DnsConfig {
  const { type } = podDnsType(pod, s.clusterDNS)
  let c: DnsConfig = { servers: [], searches: [], options: [] }
  if (type === 'cluster') {
    const ns = pod.metadata.namespace
    const own = s.clusterDomain === '' ? [] : [`${ns}.svc.${s.clusterDomain}`, `svc.${s.clusterDomain}`, s.clusterDomain]
    c = { servers: [...s.clusterDNS], searches: [...own, ...hostResolv.searches], options: ['ndots:5'] }
  } else if (type === 'host') {
    c = s.resolvConf === ''
      ? { servers: s.nodeIPs.length === 0 ? ['127.0.0.1'] : s.nodeIPs.map(ip => ip.includes(':') ? '::1' : '127.0.0.1'), searches: ['.'], options: [] }
      : { servers: [...hostResolv.servers], searches: [...hostResolv.searches], options: [...hostResolv.options] }
  }
  const extra = (pod.spec as Pod['spec'] & { dnsConfig?: { nameservers?: string[]; searches?: string[]; options?: Array<{ name?: string; value?: string }> } }).dnsConfig
  if (extra !== undefined) {
    c = {
      servers: unique([...c.servers, ...(extra.nameservers ?? [])]),
      searches: unique([...c.searches, ...(extra.searches ?? [])]),
      options: mergeOptions(c.options, extra.options ?? [])
    }
  }
  return fitLimits(c)
}

/** At most 3 servers, 32 search paths and 2048 characters of search line (the kubelet drops the rest). */
export function fitLimits (c: DnsConfig): DnsConfig {
  const servers = unique(c.servers).slice(0, MAX_NAMESERVERS)
  const searches: string[] = []
  let chars = 0
  for (const d of unique(c.searches)) {
    if (searches.length >= MAX_SEARCH_PATHS || chars + d.length + (searches.length > 0 ? 1 : 0) > MAX_SEARCH_CHARS) break
    chars += d.length + (searches.length > 0 ? 1 : 0)
    searches.push(d)
  }
  return { servers, searches, options: c.options }
}

/** Reads --resolv-conf; a missing or unreadable file counts as empty, as the kubelet only warns about it. */
export function readHostResolv (path: string): DnsConfig {
  if (path === '') return { servers: [], searches: [], options: [] }
  try { return parseResolvConf(readFileSync(path, 'utf8')) } catch { return { servers: [], searches: [], options: [] } }
}
