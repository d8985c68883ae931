// The node's per-pod sandbox settings and admission from its flags: DNS (--cluster-dns, --cluster-domain,
// --resolv-conf) and sysctls (--allowed-unsafe-sysctls), bound once and handed to the pod manager.

import type { PodSandboxConfig } from '../runtime/runtime.js'
import { podDnsConfig, readHostResolv, type DnsSettings } from './dns.js'
import type { Pod } from './pod-types.js'
import { podSysctls, sysctlRefusal } from './sysctls.js'

export interface PodNetworkSettings extends DnsSettings { allowedUnsafeSysctls: string[] }

export function podNetworkSettings (s: PodNetworkSettings): {
  sandboxExtras(pod: Pod): Partial<PodSandboxConfig>
  admit(pod: Pod): { reason: string; message: string } | undefined
} {
  return {
    // --resolv-conf is read at each sandbox creation, so an edited host resolver reaches new pods (as the kubelet).
    sandboxExtras: pod => ({ dnsConfig: podDnsConfig(pod, s, readHostResolv(s.resolvConf)), sysctls: podSysctls(pod) }),
    admit: pod => {
      const message = sysctlRefusal(pod, s.allowedUnsafeSysctls)
      return message === undefined ? undefined : { reason: 'SysctlForbidden', message }
    }
  }
}
