// The node's per-pod sandbox and container settings and admission from its flags: DNS (--cluster-dns,
// --cluster-domain, --resolv-conf), sysctls (--allowed-unsafe-sysctls) and seccomp (--seccomp-default), bound once
// and handed to the pod manager.

import { join } from 'node:path'
import type { ContainerConfig, PodSandboxConfig } from '../runtime/runtime.js'
import { seccompProfile, type SeccompProfileField } from './seccomp.js'
import { podDnsConfig, readHostResolv, type DnsSettings } from './dns.js'
import type { Container, Pod } from './pod-types.js'
import { podSysctls, sysctlRefusal } from './sysctls.js'

/** Every container port, as the kubelet sends them; the runtime publishes those with a hostPort. */
export function portMappings (pod: Pod): NonNullable<PodSandboxConfig['portMappings']> {
  return pod.spec.containers.flatMap(c => (c.ports ?? []).map(p => ({
    protocol: p.protocol === 'UDP' || p.protocol === 'SCTP' ? p.protocol : 'TCP' as const,
    containerPort: p.containerPort,
    hostPort: p.hostPort ?? 0,
    hostIp: (p as { hostIP?: string }).hostIP ?? ''
  })))
}

export interface PodSandboxSettings extends DnsSettings { allowedUnsafeSysctls: string[]; seccompDefault: boolean; rootDir: string }

type WithSeccomp = { securityContext?: { seccompProfile?: SeccompProfileField } }

export function podSandboxSettings (s: PodSandboxSettings): {
  sandboxExtras(pod: Pod): Partial<PodSandboxConfig>
  containerExtras(pod: Pod, container: Container): Partial<ContainerConfig>
  admit(pod: Pod): { reason: string; message: string } | undefined
} {
  const profileRoot = join(s.rootDir, 'seccomp')
  const podProfile = (pod: Pod): SeccompProfileField | undefined => (pod.spec as WithSeccomp).securityContext?.seccompProfile
  return {
    // --resolv-conf is read at each sandbox creation, so an edited host resolver reaches new pods (as the kubelet).
    sandboxExtras: pod => ({
      dnsConfig: podDnsConfig(pod, s, readHostResolv(s.resolvConf)),
      sysctls: podSysctls(pod),
      portMappings: portMappings(pod),
      seccomp: seccompProfile(podProfile(pod), undefined, s.seccompDefault, profileRoot)
    }),
    containerExtras: (pod, c) => ({ seccomp: seccompProfile(podProfile(pod), (c as WithSeccomp).securityContext?.seccompProfile, s.seccompDefault, profileRoot) }),
    admit: pod => {
      const message = sysctlRefusal(pod, s.allowedUnsafeSysctls)
      return message === undefined ? undefined : { reason: 'SysctlForbidden', message }
    }
  }
}
