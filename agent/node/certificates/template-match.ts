// Whether a certificate still says what the manager would ask for now: subject and subject alternative names (client-go's certSatisfiesTemplate).

import { isIPv6 } from 'node:net'
import * as x509 from '@peculiar/x509'
import type { CsrTemplate } from './csr.js'

/** Full eight-group lower-case form of an IPv6 address; IPv4 unchanged. */
export function canonicalIp (ip: string): string {
  if (!isIPv6(ip)) return ip
  const [head, tail] = ip.toLowerCase().split('::') as [string, string | undefined]
  const groups = (s: string | undefined): string[] => s === undefined || s === '' ? [] : s.split(':')
  const h = groups(head)
  const t = groups(tail)
  const fill = tail === undefined ? [] : Array<string>(8 - h.length - t.length).fill('0')
  return [...h, ...fill, ...t].map(g => g.includes('.') ? g : g.replace(/^0+(?=.)/, '')).join(':')
}

function sameSet (a: string[], b: string[]): boolean {
  const sa = new Set(a)
  const sb = new Set(b)
  return sa.size === sb.size && [...sa].every(v => sb.has(v))
}

export function satisfiesTemplate (certPem: string, t: CsrTemplate): boolean {
  let cert: x509.X509Certificate
  try { cert = new x509.X509Certificate(certPem) } catch { return false }
  if ((cert.subjectName.getField('CN')[0] ?? '') !== t.commonName) return false
  if (!sameSet(cert.subjectName.getField('O'), t.organizations)) return false
  const san = cert.getExtension(x509.SubjectAlternativeNameExtension)
  const names = san?.names.items ?? []
  const dns = names.filter(n => n.type === 'dns').map(n => n.value)
  const ips = names.filter(n => n.type === 'ip').map(n => canonicalIp(n.value))
  return sameSet(dns, t.dnsNames ?? []) && sameSet(ips, (t.ipAddresses ?? []).map(canonicalIp))
}
