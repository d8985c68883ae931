// Two `orch apiserver` on one 3-member etcd cluster: one PKI and kubeconfig for both, writes seen across, CRDs served
// by both, a consistent LIST through the second (ConsistentListFromCache on: from its watch cache) sees what the first
// just wrote, and a watcher whose API server dies resumes on the other from its last resourceVersion, missing nothing.
import t from 'tap'
import { cpSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { request, type Dispatcher } from 'undici'
import { runKubectl, startOrch } from './orch-process.js'
import { startTestEtcd } from '../apiserver/storage/etcd/etcd-for-tests.js'

const cluster = startTestEtcd(3)
if ('skip' in cluster) {
  t.plan(0, cluster.skip)
} else {
  const dir = mkdtempSync(join(tmpdir(), 'orch-etcd-e2e-'))
  t.teardown(() => { cluster.stop(); rmSync(dir, { recursive: true, force: true }) })
  const etcdArgs = ['--etcd-servers', cluster.endpoints.join(','), '--etcd-prefix', '/e2e']

  // Both servers live for the whole file (the second test kills b).
  const a = await startOrch(join(dir, 'a'), 60_000, etcdArgs, 'apiserver')
  t.teardown(() => a.stop())
  // The second server shares the first one's PKI directory (CA, serving and service-account keys).
  cpSync(join(dir, 'a', 'pki'), join(dir, 'b', 'pki'), { recursive: true })
  const b = await startOrch(join(dir, 'b'), 60_000, [...etcdArgs, '--feature-gates', 'ConsistentListFromCache=true'], 'apiserver')
  t.teardown(() => b.stop())

  t.test('two API servers on one etcd serve one cluster', async t => {
    t.not(a.server, b.server)
    const cache = join(dir, 'kubectl-cache')
    const kc = (server: string, ...args: string[]) => runKubectl(a.kubeconfig, cache, ['--server', server, ...args])

    const viaB = await kc(b.server, 'get', 'namespaces', '-o', 'name')
    t.equal(viaB.code, 0, `the first server's kubeconfig works against the second: ${viaB.stderr}`)
    t.match(viaB.stdout, /namespace\/kube-system/)

    t.equal((await kc(a.server, 'create', 'configmap', 'from-a', '--from-literal=k=v')).code, 0)
    const got = await kc(b.server, 'get', 'configmap', 'from-a', '-o', 'jsonpath={.data.k}')
    t.equal(got.stdout, 'v', 'a write through one server is read through the other')

    const crd = JSON.stringify({
      apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name: 'widgets.example.com' },
      spec: { group: 'example.com', scope: 'Namespaced', names: { plural: 'widgets', singular: 'widget', kind: 'Widget' },
        versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } }] }
    })
    const crdFile = join(dir, 'crd.json')
    const { writeFileSync } = await import('node:fs')
    writeFileSync(crdFile, crd)
    t.equal((await kc(a.server, 'apply', '-f', crdFile)).code, 0)
    const widget = join(dir, 'widget.json')
    writeFileSync(widget, JSON.stringify({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w1', namespace: 'default' }, size: 3 }))
    let created = await kc(b.server, 'create', '-f', widget)
    for (let i = 0; i < 40 && created.code !== 0; i++) {
      await new Promise(resolve => setTimeout(resolve, 250))
      created = await kc(b.server, 'create', '-f', widget)
    }
    t.equal(created.code, 0, `a CRD created through one server is served by the other: ${created.stderr}`)
    t.equal((await kc(a.server, 'get', 'widget', 'w1', '-o', 'jsonpath={.size}')).stdout, '3')

    const leases = await kc(a.server, 'get', 'leases', '-n', 'kube-system', '-l', 'apiserver.kubernetes.io/identity=kube-apiserver', '-o', 'name')
    t.equal(leases.stdout.trim().split('\n').filter(l => l !== '').length, 2, `each API server holds an identity Lease: ${leases.stdout}${leases.stderr}`)
  })

  t.test('with ConsistentListFromCache a LIST through one server sees the write just acknowledged by the other', async t => {
    const path = '/api/v1/namespaces/default/configmaps'
    const missed: string[] = []
    for (let i = 0; i < 15; i++) {
      const name = `ryw-${i}`
      const res = await request(a.server + path, {
        method: 'POST', dispatcher: a.dispatcher, headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name } })
      })
      const created = await res.body.json() as { metadata: { resourceVersion: string } }
      t.equal(res.statusCode, 201)
      const list = await request(b.server + path, { dispatcher: b.dispatcher })
      const body = await list.body.json() as { metadata: { resourceVersion: string }, items: Array<{ metadata: { name: string } }> }
      if (!body.items.some(x => x.metadata.name === name) || Number(body.metadata.resourceVersion) < Number(created.metadata.resourceVersion)) {
        missed.push(`${name} (created at ${created.metadata.resourceVersion}, listed at ${body.metadata.resourceVersion})`)
      }
    }
    t.same(missed, [], 'every LIST through the other server saw the create before it')
  })

  t.test('a watch through a server that dies resumes on the other with no event lost or repeated', async t => {
    const path = '/api/v1/namespaces/default/configmaps'
    const post = async (name: string): Promise<void> => {
      const res = await request(a.server + path, {
        method: 'POST', dispatcher: a.dispatcher, headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, labels: { batch: 'w' } } })
      })
      t.equal(res.statusCode, 201, `create ${name}`)
      await res.body.text()
    }
    const list = await request(`${b.server}${path}?labelSelector=batch%3Dw`, { dispatcher: b.dispatcher })
    let rv = (await list.body.json() as { metadata: { resourceVersion: string } }).metadata.resourceVersion
    const seen: string[] = []
    // An informer's watch loop: follow events, and when the server goes away, watch again elsewhere from the last RV.
    const follow = async (server: string, dispatcher: Dispatcher, until: () => boolean): Promise<void> => {
      try {
        const res = await request(`${server}${path}?watch=1&labelSelector=batch%3Dw&allowWatchBookmarks=true&resourceVersion=${rv}`, { dispatcher })
        let buf = ''
        for await (const chunk of res.body) {
          buf += chunk.toString()
          for (let nl = buf.indexOf('\n'); nl >= 0; nl = buf.indexOf('\n')) {
            const ev = JSON.parse(buf.slice(0, nl)) as { type: string, object: { metadata: { name: string, resourceVersion: string } } }
            buf = buf.slice(nl + 1)
            rv = ev.object.metadata.resourceVersion
            if (ev.type === 'ADDED') seen.push(ev.object.metadata.name)
            if (until()) { res.body.destroy(); return }
          }
        }
      } catch { /* the server died under the watch */ }
    }
    const names = Array.from({ length: 40 }, (_, i) => `cm-${i}`)
    const onB = follow(b.server, b.dispatcher, () => false)
    for (const n of names.slice(0, 20)) await post(n)
    while (seen.length < 10) await new Promise(resolve => setTimeout(resolve, 20))
    b.child.kill('SIGKILL')
    await onB
    for (const n of names.slice(20)) await post(n)
    await follow(a.server, a.dispatcher, () => seen.length >= names.length)
    t.same(seen, names, 'every create seen exactly once, in order, across the two servers')
  })

}
