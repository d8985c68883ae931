// Pod sysctls as the v1.29 kubelet admits them: the safe set is always allowed, others only when they match
// --allowed-unsafe-sysctls (a name or a prefix ending in *); namespaces shared with the host refuse theirs.

import type { Pod } from './pod-types.js'

/** The kubelet's safe sysctls (SafeSysctlAllowlist of v1.29; every one is namespaced and isolated per pod). */
export const SAFE_SYSCTLS: readonly string[] = [
  'kernel.shm_rmid_forced',
  'net.ipv4.ip_local_port_range',
  'net.ipv4.tcp_syncookies',
  'net.ipv4.ping_group_range',
  'net.ipv4.ip_unprivileged_port_start',
  'net.ipv4.ip_local_reserved_ports',
  'net.ipv4.tcp_keepalive_time',
  'net.ipv4.tcp_fin_timeout',
  'net.ipv4.tcp_keepalive_intvl',
  'net.ipv4.tcp_keepalive_probes'
]

/** Slash-separated names (net/ipv4/ip_local_port_range) are the same sysctl as the dotted form. */
export function normalizeSysctl (name: string): string {
  const first = name.search(/[./]/)
  if (first < 0 || name[first] === '.') return name
  return name.replace(/[./]/g, c => (c === '/' ? '.' : '/'))
}

type PodWithSysctls = Pod & { spec: Pod['spec'] & { hostIPC?: boolean; securityContext?: { sysctls?: Array<{ name: string; value: string }> } } }

/** The pod's sysctls (dotted names), for the sandbox config. */
export function podSysctls (pod: Pod): Record<string, string> {
  const out: Record<string, string> = {}
  for (const s of (pod as PodWithSysctls).spec.securityContext?.sysctls ?? []) out[normalizeSysctl(s.name)] = s.value
  return out
}

function allowedUnsafe (name: string, patterns: string[]): boolean {
  return patterns.some(p => p.endsWith('*') ? name.startsWith(p.slice(0, -1)) : p === name)
}

/** Undefined when the pod may run; else the kubelet's SysctlForbidden message. */
export function sysctlRefusal (pod: Pod, allowedUnsafeSysctls: string[]): string | undefined {
  const spec = (pod as PodWithSysctls).spec
  for (const s of spec.securityContext?.sysctls ?? []) {
    const name = normalizeSysctl(s.name)
    if (!SAFE_SYSCTLS.includes(name) && !allowedUnsafe(name, allowedUnsafeSysctls)) return `forbidden sysctl: "${name}" not allowlisted`
    if (spec.hostNetwork === true && name.startsWith('net.')) return `forbidden sysctl: "${name}" not allowed with host net enabled`
    if (spec.hostIPC === true && (name.startsWith('kernel.shm') || name.startsWith('kernel.msg') || name.startsWith('kernel.sem') || name.startsWith('fs.mqueue.'))) {
      return `forbidden sysctl: "${name}" not allowed with host ipc enabled`
    }
  }
  return undefined
}
