import t from 'tap'
import { normalizeSysctl, podSysctls, sysctlRefusal } from './sysctls.js'
import type { Pod } from './pod-types.js'

const pod = (sysctls: Array<{ name: string; value: string }>, extra: Record<string, unknown> = {}): Pod =>
  ({ metadata: { name: 'p', namespace: 'default', uid: 'u' }, spec: { containers: [], securityContext: { sysctls }, ...extra } }) as unknown as Pod

t.test('safe sysctls are admitted and passed to the sandbox with dotted names', async t => {
  const p = pod([{ name: 'net.ipv4.ip_local_port_range', value: '1024 65000' }, { name: 'kernel/shm_rmid_forced', value: '1' }])
  t.equal(sysctlRefusal(p, []), undefined)
  t.same(podSysctls(p), { 'net.ipv4.ip_local_port_range': '1024 65000', 'kernel.shm_rmid_forced': '1' })
})

t.test('slash names with dots inside keep those dots', async t => {
  t.equal(normalizeSysctl('net/ipv4/conf/eth0.100/forwarding'), 'net.ipv4.conf.eth0/100.forwarding')
  t.equal(normalizeSysctl('net.ipv4.tcp_syncookies'), 'net.ipv4.tcp_syncookies')
})

t.test('unsafe sysctls are refused unless --allowed-unsafe-sysctls names them or a prefix pattern matches', async t => {
  const p = pod([{ name: 'kernel.msgmax', value: '65536' }])
  t.equal(sysctlRefusal(p, []), 'forbidden sysctl: "kernel.msgmax" not allowlisted')
  t.equal(sysctlRefusal(p, ['kernel.msgmax']), undefined)
  t.equal(sysctlRefusal(p, ['kernel.msg*']), undefined)
  t.not(sysctlRefusal(p, ['kernel.sem']), undefined)
})

t.test('host namespaces refuse their sysctls even when safe', async t => {
  t.equal(sysctlRefusal(pod([{ name: 'net.ipv4.tcp_syncookies', value: '1' }], { hostNetwork: true }), []),
    'forbidden sysctl: "net.ipv4.tcp_syncookies" not allowed with host net enabled')
  t.equal(sysctlRefusal(pod([{ name: 'kernel.shm_rmid_forced', value: '1' }], { hostIPC: true }), []),
    'forbidden sysctl: "kernel.shm_rmid_forced" not allowed with host ipc enabled')
})
