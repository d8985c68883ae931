import t, { type Test } from 'tap'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { request } from 'undici'
import { createApiServer } from '../server.js'
import { createRegistry } from '../registry/registry.js'
import { openLmdbStore } from '../storage/lmdb/index.js'
import { silentLogger } from '../registry/testing.js'
import { apiServerMetrics, collectStorageGauges, timedStore } from '../cli/metrics-setup.js'

/** A real API server on a real LMDB store, with its metrics. */
async function start (t: Test) {
  const dir = mkdtempSync(join(tmpdir(), 'orch-metrics-'))
  const metrics = apiServerMetrics(undefined)
  const store = timedStore(metrics, await openLmdbStore({ path: dir }))
  const registry = createRegistry({ store, logger: silentLogger })
  await registry.start()
  collectStorageGauges(metrics, () => registry, store)
  const server = createApiServer({ registry, logger: silentLogger, metrics })
  const { port } = await server.listen({ port: 0 })
  t.teardown(async () => { await server.close(); await registry.stop(); await store.close(); rmSync(dir, { recursive: true, force: true }) })
  const base = `http://127.0.0.1:${port}`
  const call = async (method: string, path: string, body?: unknown) => {
    const r = await request(base + path, { method: method as 'GET', body: body === undefined ? undefined : JSON.stringify(body), headers: { 'content-type': 'application/json' } })
    return { status: r.statusCode, text: await r.body.text(), headers: r.headers }
  }
  return { call, base }
}

/** The value of one sample line, by metric name and an exact label set (in the registry's label order). */
function sample (text: string, name: string, labels: Record<string, string>): number | undefined {
  for (const line of text.split('\n')) {
    if (!line.startsWith(name + '{')) continue
    const m = /^([^{]+)\{(.*)\} (\S+)$/.exec(line)
    if (m === null || m[1] !== name) continue
    const got = Object.fromEntries([...m[2]!.matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map(x => [x[1], x[2]]))
    if (Object.entries(labels).every(([k, v]) => got[k] === v)) return Number(m[3])
  }
  return undefined
}

t.test('requests are counted and timed with kube-apiserver labels, storage and watch metrics included', async t => {
  const { call, base } = await start(t)
  const cm = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a' }, data: { k: 'v' } }
  t.equal((await call('POST', '/api/v1/namespaces/default/configmaps', cm)).status, 201)
  t.equal((await call('POST', '/api/v1/namespaces/default/configmaps?dryRun=All', { ...cm, metadata: { name: 'b' } })).status, 201)
  t.equal((await call('GET', '/api/v1/namespaces/default/configmaps/a')).status, 200)
  t.equal((await call('GET', '/api/v1/namespaces/default/configmaps/missing')).status, 404)
  t.equal((await call('GET', '/api/v1/configmaps')).status, 200)
  t.equal((await call('GET', '/api/v1/namespaces/default/nosuchthings/x')).status, 404)
  t.equal((await call('GET', '/api/v1/namespaces/default/configmaps/a/nosuchsub')).status, 404)
  t.equal((await call('POST', '/api/v1/namespaces/default/configmaps?dryRun=Garbage', { ...cm, metadata: { name: 'c' } })).status, 422)

  // A watch open during the scrape: registered and long-running; its first event counted.
  const ac = new AbortController()
  const watch = await request(`${base}/api/v1/namespaces/default/configmaps?watch=1`, { signal: ac.signal })
  const reader = watch.body[Symbol.asyncIterator]()
  await reader.next()
  const during = (await call('GET', '/metrics'))
  t.equal(during.status, 200)
  t.match(during.headers['content-type'], /^text\/plain; version=0\.0\.4/)
  const text = during.text
  const req = { dry_run: '', group: '', version: 'v1', resource: 'configmaps', subresource: '', component: 'apiserver' }
  t.equal(sample(text, 'apiserver_request_total', { ...req, verb: 'POST', scope: 'namespace', code: '201' }), 1)
  t.equal(sample(text, 'apiserver_request_total', { ...req, verb: 'POST', dry_run: 'All', scope: 'namespace', code: '201' }), 1)
  t.equal(sample(text, 'apiserver_request_total', { ...req, verb: 'GET', scope: 'resource', code: '200' }), 1)
  t.equal(sample(text, 'apiserver_request_total', { ...req, verb: 'GET', scope: 'resource', code: '404' }), 1)
  t.equal(sample(text, 'apiserver_request_total', { ...req, verb: 'LIST', scope: 'cluster', code: '200' }), 1)
  t.equal(sample(text, 'apiserver_request_duration_seconds_count', { ...req, verb: 'GET', scope: 'resource' }), 2)
  t.notMatch(text, 'nosuch', 'paths naming no served resource or subresource make no series')
  t.equal(sample(text, 'apiserver_request_total', { verb: 'GET', group: '', version: '', resource: '', scope: '', code: '404' }), 2)
  t.equal(sample(text, 'apiserver_request_total', { ...req, verb: 'POST', dry_run: 'invalid', scope: 'namespace', code: '422' }), 1)
  t.equal(sample(text, 'apiserver_request_duration_seconds_bucket', { ...req, verb: 'GET', scope: 'resource', le: '60' }), 2)
  t.equal(sample(text, 'apiserver_longrunning_requests', { verb: 'WATCH', group: '', version: 'v1', resource: 'configmaps', scope: 'namespace', component: 'apiserver' }), 1)
  t.equal(sample(text, 'apiserver_registered_watchers', { group: '', version: 'v1', kind: 'ConfigMap' }), 1)
  t.ok((sample(text, 'apiserver_watch_events_total', { group: '', version: 'v1', kind: 'ConfigMap' }) ?? 0) >= 1)
  t.ok((sample(text, 'apiserver_watch_events_sizes_count', { group: '', version: 'v1', kind: 'ConfigMap' }) ?? 0) >= 1)
  t.equal(sample(text, 'apiserver_storage_objects', { resource: 'configmaps' }), 1)
  t.ok((sample(text, 'etcd_request_duration_seconds_count', { operation: 'create', type: 'configmaps' }) ?? 0) >= 1)
  t.match(text, /# HELP apiserver_request_total \[STABLE\] Counter of apiserver requests/)
  t.equal(sample(text, 'apiserver_current_inflight_requests', { request_kind: 'readOnly' }), 1, 'the scrape itself, in the last second')
  t.ok(sample(text, 'apiserver_current_inflight_requests', { request_kind: 'mutating' }) !== undefined)
  t.match(text, /# HELP apiserver_registered_watchers \[ALPHA\] /)
  t.match(text, /# HELP apiserver_storage_db_total_size_in_bytes \[ALPHA\] \(Deprecated from 1\.29\) /)
  t.notMatch(text, /etcd_db_total_size_in_bytes/, 'deprecated in 1.28: hidden in 1.29')
  t.match(text, /^process_cpu_user_seconds_total /m)
  t.match(text, /^nodejs_eventloop_lag_seconds /m)

  ac.abort()
  await reader.return?.()
  let after = ''
  for (let i = 0; i < 50; i++) {
    after = (await call('GET', '/metrics')).text
    if (sample(after, 'apiserver_registered_watchers', { group: '', version: 'v1', kind: 'ConfigMap' }) === 0) break
    await new Promise(resolve => setTimeout(resolve, 20))
  }
  t.equal(sample(after, 'apiserver_registered_watchers', { group: '', version: 'v1', kind: 'ConfigMap' }), 0)
  t.equal(sample(after, 'apiserver_longrunning_requests', { verb: 'WATCH', group: '', version: 'v1', resource: 'configmaps', scope: 'namespace', component: 'apiserver' }), 0)
  t.equal(sample(after, 'apiserver_request_total', { ...req, verb: 'WATCH', scope: 'namespace', code: '200' }), 1)
  t.equal(sample(after, 'apiserver_request_total', { verb: 'GET', dry_run: '', group: '', version: '', resource: '', subresource: '', scope: '', component: 'apiserver', code: '200' }), 1, 'the earlier scrape itself')
  t.equal((await call('POST', '/metrics')).status, 405)
})
