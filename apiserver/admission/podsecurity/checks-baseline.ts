// The baseline controls of the Pod Security Standards (v1.29 policy library), each with its version history.

import type { Check } from './check.js'
import {
  addUnique, allContainers, annotations, containerName, list, named, obj, quote, quoteAll, securityContext, setters, str, type Obj, type PodView
} from './pod-view.js'

const hostProcess: Check = {
  id: 'windowsHostProcess',
  level: 'baseline',
  minMinor: 0,
  check (p) {
    const pod = obj(securityContext(p.spec).windowsOptions).hostProcess === true
    const cs = allContainers(p.spec).filter(c => obj(securityContext(c).windowsOptions).hostProcess === true).map(containerName)
    if (!pod && cs.length === 0) return undefined
    return { reason: 'hostProcess', detail: `${setters(pod, cs)} must not set securityContext.windowsOptions.hostProcess=true` }
  }
}

const hostNamespaces: Check = {
  id: 'hostNamespaces',
  level: 'baseline',
  minMinor: 0,
  check (p) {
    const set = (['hostNetwork', 'hostPID', 'hostIPC'] as const).filter(f => p.spec[f] === true)
    return set.length === 0 ? undefined : { reason: 'host namespaces', detail: set.map(f => `${f}=true`).join(', ') }
  }
}

const privileged: Check = {
  id: 'privileged',
  level: 'baseline',
  minMinor: 0,
  check (p) {
    const cs = allContainers(p.spec).filter(c => securityContext(c).privileged === true).map(containerName)
    if (cs.length === 0) return undefined
    return { reason: 'privileged', detail: `${named('container', cs)} must not set securityContext.privileged=true` }
  }
}

const BASELINE_CAPS = new Set(['AUDIT_WRITE', 'CHOWN', 'DAC_OVERRIDE', 'FOWNER', 'FSETID', 'KILL', 'MKNOD', 'NET_BIND_SERVICE',
  'SETFCAP', 'SETGID', 'SETPCAP', 'SETUID', 'SYS_CHROOT'])

/** Containers adding capabilities outside `allowed`, and those capabilities (in the order met). */
export function forbiddenAdds (p: PodView, allowed: (cap: string) => boolean): { containers: string[], caps: string[] } {
  const containers: string[] = []
  const caps: string[] = []
  for (const c of allContainers(p.spec)) {
    const add = obj(securityContext(c).capabilities).add
    const bad = (Array.isArray(add) ? add : []).filter((x): x is string => typeof x === 'string' && !allowed(x))
    if (bad.length === 0) continue
    containers.push(containerName(c))
    for (const cap of bad) addUnique(caps, cap)
  }
  return { containers, caps: caps.sort() }
}

const capabilitiesBaseline: Check = {
  id: 'capabilities_baseline',
  level: 'baseline',
  minMinor: 0,
  check (p) {
    const { containers, caps } = forbiddenAdds(p, cap => BASELINE_CAPS.has(cap))
    if (containers.length === 0) return undefined
    return { reason: 'non-default capabilities', detail: `${named('container', containers)} must not include ${quoteAll(caps)} in securityContext.capabilities.add` }
  }
}

const hostPathVolumes: Check = {
  id: 'hostPathVolumes',
  level: 'baseline',
  minMinor: 0,
  check (p) {
    const vs = list(p.spec.volumes).filter(v => v.hostPath !== undefined && v.hostPath !== null).map(v => str(v.name) ?? '')
    return vs.length === 0 ? undefined : { reason: 'hostPath volumes', detail: named('volume', vs) }
  }
}

const hostPorts: Check = {
  id: 'hostPorts',
  level: 'baseline',
  minMinor: 0,
  check (p) {
    const cs: string[] = []
    const ports: string[] = []
    for (const c of allContainers(p.spec)) {
      const used = list(c.ports).map(x => x.hostPort).filter((x): x is number => typeof x === 'number' && x !== 0)
      if (used.length === 0) continue
      cs.push(containerName(c))
      for (const port of used) addUnique(ports, String(port))
    }
    if (cs.length === 0) return undefined
    return { reason: 'hostPort', detail: `${named('container', cs)} ${cs.length === 1 ? 'uses' : 'use'} hostPort${ports.length === 1 ? '' : 's'} ${ports.sort().join(', ')}` }
  }
}

const APPARMOR_PREFIX = 'container.apparmor.security.beta.kubernetes.io/'

const appArmorProfile: Check = {
  id: 'appArmorProfile',
  level: 'baseline',
  minMinor: 0,
  check (p) {
    const bad = Object.entries(annotations(p))
      .filter(([k, v]) => k.startsWith(APPARMOR_PREFIX) && !(v === '' || v === 'runtime/default' || v.startsWith('localhost/')))
      .sort(([a], [b]) => a < b ? -1 : a > b ? 1 : 0)
    if (bad.length === 0) return undefined
    return {
      reason: `forbidden AppArmor profile${bad.length === 1 ? '' : 's'}`,
      detail: bad.map(([k, v]) => `${k}=${quote(v)}`).join(', ')
    }
  }
}

const SELINUX_TYPES = new Set(['', 'container_t', 'container_init_t', 'container_kvm_t'])

const seLinuxOptions: Check = {
  id: 'seLinuxOptions',
  level: 'baseline',
  minMinor: 0,
  check (p) {
    const types: string[] = []
    let user = false
    let role = false
    const bad = (o: Obj): boolean => {
      const opts = obj(securityContext(o).seLinuxOptions)
      const t = str(opts.type) ?? ''
      const u = str(opts.user) ?? ''
      const r = str(opts.role) ?? ''
      if (!SELINUX_TYPES.has(t)) addUnique(types, t)
      if (u !== '') user = true
      if (r !== '') role = true
      return !SELINUX_TYPES.has(t) || u !== '' || r !== ''
    }
    const pod = bad(p.spec)
    const cs = allContainers(p.spec).filter(bad).map(containerName)
    if (!pod && cs.length === 0) return undefined
    const what: string[] = []
    if (types.length > 0) what.push(named('type', types.sort()))
    if (user) what.push('user may not be set')
    if (role) what.push('role may not be set')
    return { reason: 'seLinuxOptions', detail: `${setters(pod, cs)} set forbidden securityContext.seLinuxOptions: ${what.join('; ')}` }
  }
}

const procMount: Check = {
  id: 'procMount',
  level: 'baseline',
  minMinor: 0,
  check (p) {
    const cs: string[] = []
    const values: string[] = []
    for (const c of allContainers(p.spec)) {
      const v = str(securityContext(c).procMount)
      if (v === undefined || v === '' || v === 'Default') continue
      cs.push(containerName(c))
      addUnique(values, v)
    }
    if (cs.length === 0) return undefined
    return { reason: 'procMount', detail: `${named('container', cs)} must not set securityContext.procMount to ${quoteAll(values.sort())}` }
  }
}

const SECCOMP_POD_ANNOTATION = 'seccomp.security.alpha.kubernetes.io/pod'
const SECCOMP_CONTAINER_PREFIX = 'container.seccomp.security.alpha.kubernetes.io/'

/** Before v1.19 seccomp was set by annotation; `unconfined` is forbidden at baseline. */
function seccompBaselineAnnotations (p: PodView): ReturnType<Check['check']> {
  const bad = Object.entries(annotations(p))
    .filter(([k, v]) => (k === SECCOMP_POD_ANNOTATION || k.startsWith(SECCOMP_CONTAINER_PREFIX)) && v === 'unconfined')
    .sort(([a], [b]) => a < b ? -1 : a > b ? 1 : 0)
  if (bad.length === 0) return undefined
  return { reason: 'seccompProfile', detail: `forbidden annotation${bad.length === 1 ? '' : 's'} ${bad.map(([k, v]) => `${k}=${quote(v)}`).join(', ')}` }
}

const seccompBaseline: Check = {
  id: 'seccompProfile_baseline',
  level: 'baseline',
  minMinor: 0,
  check (p, minor) {
    if (minor < 19) return seccompBaselineAnnotations(p)
    const unconfined = (o: Obj): boolean => str(obj(securityContext(o).seccompProfile).type) === 'Unconfined'
    const pod = unconfined(p.spec)
    const cs = allContainers(p.spec).filter(unconfined).map(containerName)
    if (!pod && cs.length === 0) return undefined
    return { reason: 'seccompProfile', detail: `${setters(pod, cs)} must not set securityContext.seccompProfile.type to "Unconfined"` }
  }
}

const SAFE_SYSCTLS: Array<[number, string[]]> = [
  [0, ['kernel.shm_rmid_forced', 'net.ipv4.ip_local_port_range', 'net.ipv4.tcp_syncookies', 'net.ipv4.ping_group_range',
    'net.ipv4.ip_unprivileged_port_start']],
  [27, ['net.ipv4.ip_local_reserved_ports']],
  [29, ['net.ipv4.tcp_keepalive_time', 'net.ipv4.tcp_fin_timeout', 'net.ipv4.tcp_keepalive_intvl', 'net.ipv4.tcp_keepalive_probes']]
]

const sysctls: Check = {
  id: 'sysctls',
  level: 'baseline',
  minMinor: 0,
  check (p, minor) {
    const safe = new Set(SAFE_SYSCTLS.filter(([since]) => minor >= since).flatMap(([, names]) => names))
    const bad: string[] = []
    for (const s of list(securityContext(p.spec).sysctls)) {
      const name = str(s.name) ?? ''
      if (!safe.has(name)) bad.push(name)
    }
    return bad.length === 0 ? undefined : { reason: 'forbidden sysctls', detail: bad.join(', ') }
  }
}

/** Sorted by id, the order the policy library reports them in. */
export const baselineChecks: Check[] = [appArmorProfile, capabilitiesBaseline, hostNamespaces, hostPathVolumes, hostPorts,
  privileged, procMount, seLinuxOptions, seccompBaseline, sysctls, hostProcess]
