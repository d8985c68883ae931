// A table per control: specs each level allows and refuses, with the policy library's wording, and version pinning.

import t from 'tap'
import { evaluatePod, formatViolations, violatesMessage } from './evaluate.js'
import { latestVersion, parseVersion, type Level, type LevelVersion } from './levels.js'
import type { Obj, PodView } from './pod-view.js'

/** A pod meeting restricted:latest; `c` patches its one container, `s` its spec, `a` its annotations. */
function pod (o: { s?: Obj, c?: Obj, a?: Record<string, string> } = {}): PodView {
  const container = {
    name: 'c',
    image: 'x',
    securityContext: {
      allowPrivilegeEscalation: false,
      runAsNonRoot: true,
      seccompProfile: { type: 'RuntimeDefault' },
      capabilities: { drop: ['ALL'] },
      ...o.c
    }
  }
  return { metadata: { name: 'p', annotations: o.a ?? {} }, spec: { containers: [container], ...o.s } }
}

const at = (level: Level, version = 'latest'): LevelVersion => ({ level, version: parseVersion(version) ?? latestVersion })
const outcome = (lv: LevelVersion, p: PodView): string => formatViolations(evaluatePod(lv, p))

interface Row { name: string, pod: PodView, baseline: string, restricted: string }

/** Each control: what baseline and restricted (latest) answer; '' = allowed. */
const table: Record<string, Row[]> = {
  hostProcess: [
    { name: 'unset', pod: pod(), baseline: '', restricted: '' },
    { name: 'pod and container set', pod: pod({ s: { securityContext: { windowsOptions: { hostProcess: true } } }, c: { windowsOptions: { hostProcess: true } } }), baseline: 'hostProcess (pod and container "c" must not set securityContext.windowsOptions.hostProcess=true)', restricted: 'hostProcess (pod and container "c" must not set securityContext.windowsOptions.hostProcess=true)' }
  ],
  hostNamespaces: [
    { name: 'false', pod: pod({ s: { hostNetwork: false } }), baseline: '', restricted: '' },
    { name: 'all three', pod: pod({ s: { hostNetwork: true, hostPID: true, hostIPC: true } }), baseline: 'host namespaces (hostNetwork=true, hostPID=true, hostIPC=true)', restricted: 'host namespaces (hostNetwork=true, hostPID=true, hostIPC=true)' }
  ],
  privileged: [
    { name: 'false', pod: pod({ c: { privileged: false } }), baseline: '', restricted: '' },
    { name: 'true', pod: pod({ c: { privileged: true } }), baseline: 'privileged (container "c" must not set securityContext.privileged=true)', restricted: 'privileged (container "c" must not set securityContext.privileged=true)' }
  ],
  capabilities: [
    { name: 'NET_BIND_SERVICE', pod: pod({ c: { capabilities: { drop: ['ALL'], add: ['NET_BIND_SERVICE'] } } }), baseline: '', restricted: '' },
    { name: 'default CHOWN', pod: pod({ c: { capabilities: { drop: ['ALL'], add: ['CHOWN'] } } }), baseline: '', restricted: 'unrestricted capabilities (container "c" must not include "CHOWN" in securityContext.capabilities.add)' },
    { name: 'SYS_ADMIN without drop', pod: pod({ c: { capabilities: { add: ['SYS_ADMIN', 'NET_RAW'] } } }), baseline: 'non-default capabilities (container "c" must not include "NET_RAW", "SYS_ADMIN" in securityContext.capabilities.add)', restricted: 'unrestricted capabilities (container "c" must set securityContext.capabilities.drop=["ALL"]; container "c" must not include "NET_RAW", "SYS_ADMIN" in securityContext.capabilities.add)' }
  ],
  hostPath: [
    { name: 'emptyDir', pod: pod({ s: { volumes: [{ name: 'v', emptyDir: {} }] } }), baseline: '', restricted: '' },
    { name: 'hostPath', pod: pod({ s: { volumes: [{ name: 'a', hostPath: { path: '/' } }, { name: 'b', hostPath: { path: '/x' } }] } }), baseline: 'hostPath volumes (volumes "a", "b")', restricted: 'restricted volume types (volumes "a", "b" use restricted volume type "hostPath")' }
  ],
  hostPorts: [
    { name: 'containerPort only', pod: pod({ c: {} }), baseline: '', restricted: '' },
    { name: 'hostPort', pod: { ...pod(), spec: { containers: [{ ...(pod().spec.containers as Obj[])[0], ports: [{ containerPort: 80, hostPort: 80 }, { containerPort: 443, hostPort: 443 }] }] } }, baseline: 'hostPort (container "c" uses hostPorts 443, 80)', restricted: 'hostPort (container "c" uses hostPorts 443, 80)' }
  ],
  appArmor: [
    { name: 'runtime/default and localhost', pod: pod({ a: { 'container.apparmor.security.beta.kubernetes.io/c': 'localhost/prof' } }), baseline: '', restricted: '' },
    { name: 'unconfined', pod: pod({ a: { 'container.apparmor.security.beta.kubernetes.io/c': 'unconfined' } }), baseline: 'forbidden AppArmor profile (container.apparmor.security.beta.kubernetes.io/c="unconfined")', restricted: 'forbidden AppArmor profile (container.apparmor.security.beta.kubernetes.io/c="unconfined")' }
  ],
  seLinux: [
    { name: 'container_t', pod: pod({ c: { seLinuxOptions: { type: 'container_t', level: 's0:c1' } } }), baseline: '', restricted: '' },
    { name: 'spc_t and a user', pod: pod({ s: { securityContext: { seLinuxOptions: { user: 'root' } } }, c: { seLinuxOptions: { type: 'spc_t' } } }), baseline: 'seLinuxOptions (pod and container "c" set forbidden securityContext.seLinuxOptions: type "spc_t"; user may not be set)', restricted: 'seLinuxOptions (pod and container "c" set forbidden securityContext.seLinuxOptions: type "spc_t"; user may not be set)' }
  ],
  procMount: [
    { name: 'Default', pod: pod({ c: { procMount: 'Default' } }), baseline: '', restricted: '' },
    { name: 'Unmasked', pod: pod({ c: { procMount: 'Unmasked' } }), baseline: 'procMount (container "c" must not set securityContext.procMount to "Unmasked")', restricted: 'procMount (container "c" must not set securityContext.procMount to "Unmasked")' }
  ],
  seccomp: [
    { name: 'Localhost on the pod', pod: pod({ s: { securityContext: { seccompProfile: { type: 'Localhost', localhostProfile: 'p' } } }, c: { seccompProfile: undefined } }), baseline: '', restricted: '' },
    { name: 'unset', pod: pod({ c: { seccompProfile: undefined } }), baseline: '', restricted: 'seccompProfile (pod or container "c" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")' },
    { name: 'Unconfined on the pod, a container without its own', pod: pod({ s: { securityContext: { seccompProfile: { type: 'Unconfined' } } }, c: { seccompProfile: undefined } }), baseline: 'seccompProfile (pod must not set securityContext.seccompProfile.type to "Unconfined")', restricted: 'seccompProfile (pod must not set securityContext.seccompProfile.type to "Unconfined")' },
    { name: 'Unconfined', pod: pod({ c: { seccompProfile: { type: 'Unconfined' } } }), baseline: 'seccompProfile (container "c" must not set securityContext.seccompProfile.type to "Unconfined")', restricted: 'seccompProfile (container "c" must not set securityContext.seccompProfile.type to "Unconfined")' }
  ],
  sysctls: [
    { name: 'safe v1.29 sysctl', pod: pod({ s: { securityContext: { sysctls: [{ name: 'net.ipv4.tcp_keepalive_time', value: '1' }] } } }), baseline: '', restricted: '' },
    { name: 'unsafe', pod: pod({ s: { securityContext: { sysctls: [{ name: 'kernel.msgmax', value: '1' }, { name: 'net.core.somaxconn', value: '1' }] } } }), baseline: 'forbidden sysctls (kernel.msgmax, net.core.somaxconn)', restricted: 'forbidden sysctls (kernel.msgmax, net.core.somaxconn)' }
  ],
  volumeTypes: [
    { name: 'allowed kinds', pod: pod({ s: { volumes: [{ name: 'a', configMap: { name: 'x' } }, { name: 'b', projected: {} }, { name: 'c', persistentVolumeClaim: { claimName: 'x' } }] } }), baseline: '', restricted: '' },
    { name: 'nfs', pod: pod({ s: { volumes: [{ name: 'n', nfs: { server: 's', path: '/' } }] } }), baseline: '', restricted: 'restricted volume types (volume "n" uses restricted volume type "nfs")' }
  ],
  privilegeEscalation: [
    { name: 'unset', pod: pod({ c: { allowPrivilegeEscalation: undefined } }), baseline: '', restricted: 'allowPrivilegeEscalation != false (container "c" must set securityContext.allowPrivilegeEscalation=false)' },
    { name: 'windows pod', pod: pod({ s: { os: { name: 'windows' } }, c: { allowPrivilegeEscalation: undefined, seccompProfile: undefined, capabilities: undefined } }), baseline: '', restricted: '' }
  ],
  runAsNonRoot: [
    { name: 'set on the pod', pod: pod({ s: { securityContext: { runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } } }, c: { runAsNonRoot: undefined } }), baseline: '', restricted: '' },
    { name: 'unset', pod: pod({ c: { runAsNonRoot: undefined } }), baseline: '', restricted: 'runAsNonRoot != true (pod or container "c" must set securityContext.runAsNonRoot=true)' },
    { name: 'false', pod: pod({ s: { securityContext: { runAsNonRoot: false } }, c: { runAsNonRoot: false } }), baseline: '', restricted: 'runAsNonRoot != true (pod and container "c" must not set securityContext.runAsNonRoot=false)' }
  ],
  runAsUser: [
    { name: '1000', pod: pod({ c: { runAsUser: 1000 } }), baseline: '', restricted: '' },
    { name: '0', pod: pod({ s: { securityContext: { runAsUser: 0 } }, c: { runAsUser: 0 } }), baseline: '', restricted: 'runAsUser=0 (pod and container "c" must not set runAsUser=0)' }
  ]
}

for (const [control, rows] of Object.entries(table)) {
  t.test(`${control}: what baseline and restricted allow and refuse`, async t => {
    for (const r of rows) {
      t.equal(outcome(at('privileged'), r.pod), '', `${r.name}: privileged allows anything`)
      t.equal(outcome(at('baseline'), r.pod), r.baseline, `${r.name}: baseline`)
      t.equal(outcome(at('restricted'), r.pod), r.restricted, `${r.name}: restricted`)
    }
  })
}

t.test('several violations read in the policy library order, baseline controls first', async t => {
  const p = pod({ c: { privileged: true, allowPrivilegeEscalation: undefined, runAsNonRoot: undefined, seccompProfile: undefined, capabilities: undefined } })
  t.equal(violatesMessage(at('restricted'), evaluatePod(at('restricted'), p)),
    'violates PodSecurity "restricted:latest": privileged (container "c" must not set securityContext.privileged=true), ' +
    'allowPrivilegeEscalation != false (container "c" must set securityContext.allowPrivilegeEscalation=false), ' +
    'unrestricted capabilities (container "c" must set securityContext.capabilities.drop=["ALL"]), ' +
    'runAsNonRoot != true (pod or container "c" must set securityContext.runAsNonRoot=true), ' +
    'seccompProfile (pod or container "c" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")')
})

t.test('several containers are named together, init and ephemeral containers included', async t => {
  const base = pod()
  const c = (base.spec.containers as Obj[])[0]
  const p: PodView = { metadata: {}, spec: { containers: [{ ...c, name: 'a', securityContext: { privileged: true } }], initContainers: [{ name: 'i', securityContext: { privileged: true } }], ephemeralContainers: [{ name: 'e', securityContext: { privileged: true } }] } }
  t.equal(outcome(at('baseline'), p), 'privileged (containers "a", "i", "e" must not set securityContext.privileged=true)')
})

t.test('version pinning follows each control\'s history', async t => {
  const rootUser = pod({ c: { runAsUser: 0 } })
  t.equal(outcome(at('restricted', 'v1.22'), rootUser), '', 'runAsUser=0 is checked from v1.23')
  t.equal(outcome(at('restricted', 'v1.23'), rootUser), 'runAsUser=0 (container "c" must not set runAsUser=0)')
  const noDrop = pod({ c: { capabilities: { add: ['CHOWN'] } } })
  t.equal(outcome(at('restricted', 'v1.21'), noDrop), '', 'before v1.22 restricted keeps the baseline capability list')
  t.match(outcome(at('restricted', 'v1.22'), noDrop), /^unrestricted capabilities/)
  const escalation = pod({ a: { 'seccomp.security.alpha.kubernetes.io/pod': 'runtime/default' }, c: { allowPrivilegeEscalation: undefined } })
  t.equal(outcome(at('restricted', 'v1.7'), escalation), '', 'allowPrivilegeEscalation from v1.8')
  t.equal(outcome(at('restricted', 'v1.8'), escalation), 'allowPrivilegeEscalation != false (container "c" must set securityContext.allowPrivilegeEscalation=false)')
  const windows = pod({ s: { os: { name: 'windows' } }, c: { allowPrivilegeEscalation: undefined } })
  t.match(outcome(at('restricted', 'v1.24'), windows), /^allowPrivilegeEscalation/, 'windows pods are relaxed from v1.25')
  t.equal(outcome(at('restricted', 'v1.25'), windows), '')
  const sysctl = pod({ s: { securityContext: { sysctls: [{ name: 'net.ipv4.tcp_fin_timeout', value: '1' }] } } })
  t.equal(outcome(at('baseline', 'v1.28'), sysctl), 'forbidden sysctls (net.ipv4.tcp_fin_timeout)', 'keepalive/fin sysctls are safe from v1.29')
  t.equal(outcome(at('baseline', 'v1.29'), sysctl), '')
  const reserved = pod({ s: { securityContext: { sysctls: [{ name: 'net.ipv4.ip_local_reserved_ports', value: '1' }] } } })
  t.match(outcome(at('baseline', 'v1.26'), reserved), /forbidden sysctls/)
  t.equal(outcome(at('baseline', 'v1.27'), reserved), '')
  t.equal(outcome(at('baseline', 'v1.99'), sysctl), '', 'a version newer than the library evaluates as latest')
  const annotated = pod({ a: { 'seccomp.security.alpha.kubernetes.io/pod': 'unconfined' }, c: { seccompProfile: undefined } })
  t.equal(outcome(at('baseline', 'v1.18'), annotated), 'seccompProfile (forbidden annotation seccomp.security.alpha.kubernetes.io/pod="unconfined")', 'before v1.19 seccomp is read from annotations')
  t.equal(outcome(at('baseline', 'v1.19'), annotated), '', 'from v1.19 the fields count')
  const runtimeDefault = pod({ a: { 'seccomp.security.alpha.kubernetes.io/pod': 'runtime/default' }, c: { seccompProfile: undefined } })
  t.equal(outcome(at('restricted', 'v1.18'), runtimeDefault), '')
  t.match(outcome(at('restricted', 'v1.19'), runtimeDefault), /^seccompProfile \(pod or container "c" must set/)
})
