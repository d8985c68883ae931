import t from 'tap'
import { fitLimits, parseResolvConf, podDnsConfig, podDnsType } from './dns.js'
import type { Pod } from './pod-types.js'

const pod = (spec: Record<string, unknown>, namespace = 'team'): Pod =>
  ({ metadata: { name: 'p', namespace, uid: 'u' }, spec: { containers: [{ name: 'c', image: 'i' }], ...spec } }) as unknown as Pod
const host = parseResolvConf('# host\nnameserver 192.0.2.53\nnameserver 192.0.2.54\nsearch corp.example lab.example.\noptions rotate timeout:2\n')
const settings = { clusterDNS: ['10.96.0.10'], clusterDomain: 'cluster.local', resolvConf: '/etc/resolv.conf', nodeIPs: ['192.0.2.10'] }

t.test('resolv.conf lines are read as glibc reads them', async t => {
  t.same(host, { servers: ['192.0.2.53', '192.0.2.54'], searches: ['corp.example', 'lab.example'], options: ['rotate', 'timeout:2'] })
})

t.test('ClusterFirst: the cluster servers, the namespace search path before the host one, ndots:5', async t => {
  t.same(podDnsConfig(pod({}), settings, host), {
    servers: ['10.96.0.10'],
    searches: ['team.svc.cluster.local', 'svc.cluster.local', 'cluster.local', 'corp.example', 'lab.example'],
    options: ['ndots:5']
  })
})

t.test('ClusterFirst on the host network and Default use the host resolver; ClusterFirstWithHostNet the cluster', async t => {
  t.same(podDnsConfig(pod({ hostNetwork: true }), settings, host), host)
  t.same(podDnsConfig(pod({ dnsPolicy: 'Default' }), settings, host), host)
  t.equal(podDnsConfig(pod({ hostNetwork: true, dnsPolicy: 'ClusterFirstWithHostNet' }), settings, host).servers[0], '10.96.0.10')
})

t.test('ClusterFirst without --cluster-dns falls back to the host resolver', async t => {
  t.same(podDnsType(pod({}), []), { type: 'host', missingClusterDNS: true })
  t.same(podDnsConfig(pod({}), { ...settings, clusterDNS: [] }, host), host)
})

t.test('an empty --resolv-conf resolves through localhost with the root search', async t => {
  t.same(podDnsConfig(pod({ dnsPolicy: 'Default' }), { ...settings, resolvConf: '' }, { servers: [], searches: [], options: [] }),
    { servers: ['127.0.0.1'], searches: ['.'], options: [] })
})

t.test('None takes only spec.dnsConfig; spec.dnsConfig merges into the others, its options replacing by name', async t => {
  t.same(podDnsConfig(pod({ dnsPolicy: 'None', dnsConfig: { nameservers: ['1.1.1.1'], searches: ['a.example'], options: [{ name: 'ndots', value: '2' }, { name: 'edns0' }] } }), settings, host),
    { servers: ['1.1.1.1'], searches: ['a.example'], options: ['ndots:2', 'edns0'] })
  t.same(podDnsConfig(pod({ dnsConfig: { nameservers: ['10.96.0.10', '9.9.9.9'], options: [{ name: 'ndots', value: '1' }] } }), settings, host).servers, ['10.96.0.10', '9.9.9.9'])
  t.same(podDnsConfig(pod({ dnsConfig: { options: [{ name: 'ndots', value: '1' }] } }), settings, host).options, ['ndots:1'])
})

t.test('resolver limits: three servers, 32 search paths, 2048 characters of search line', async t => {
  t.equal(fitLimits({ servers: ['a', 'b', 'c', 'd'], searches: [], options: [] }).servers.length, 3)
  t.equal(fitLimits({ servers: [], searches: Array.from({ length: 40 }, (_, i) => `d${i}.example`), options: [] }).searches.length, 32)
  const long = Array.from({ length: 10 }, (_, i) => `${String(i).repeat(250)}.example`)
  const kept = fitLimits({ servers: [], searches: long, options: [] }).searches
  t.ok(kept.join(' ').length <= 2048)
  t.equal(kept.length, 7)
})
