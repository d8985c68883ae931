import t, { type Test } from 'tap'
import { createApiClient, type ApiClient, type JsonObject } from '../../apiserver/client/rest-client.js'
import type { Clock } from '../../apiserver/client/rate-limiter.js'
import { startTestApiServer } from '../../test/api-server-fixture.js'
import { createEventRecorder, type ObjectReference } from './recorder.js'

// One real API server (LMDB registry over HTTP) for the file.
const { port } = await startTestApiServer(t)

/** A client whose own qps would stall any non-exempt call after the first for ~1000 s. */
function client (t: Test): ApiClient {
  const c = createApiClient({ connection: { server: `http://127.0.0.1:${port}`, insecureSkipTlsVerify: false }, qps: 0.001, burst: 1, contentType: 'application/json', userAgent: 'test' })
  t.teardown(() => c.close())
  return c
}

const logger = { info () {}, warn () {} }
let uidSeq = 0
function podRef (name: string, fieldPath?: string): ObjectReference {
  return { kind: 'Pod', namespace: 'default', name, uid: `uid-${name}-${++uidSeq}`, apiVersion: 'v1', resourceVersion: '7', fieldPath }
}

async function eventsOf (c: ApiClient, ref: ObjectReference): Promise<JsonObject[]> {
  // The query `kubectl describe pod` sends.
  const list = await c.get(`/api/v1/namespaces/${ref.namespace ?? 'default'}/events`, { exempt: true, query: { fieldSelector: `involvedObject.name=${ref.name},involvedObject.namespace=${ref.namespace ?? ''},involvedObject.uid=${ref.uid ?? ''}` } })
  return list.items as JsonObject[]
}

t.test('writes a container event with every field kubectl shows', async t => {
  const c = client(t)
  const rec = createEventRecorder({ client: c, component: 'orchlet', host: 'node-a', qps: 50, burst: 100, logger, now: () => Date.parse('2026-03-04T05:06:07.890Z') })
  const ref = podRef('web', 'spec.containers{main}')
  rec.event(ref, 'Normal', 'Started', 'Started container main')
  await rec.flush()
  const [ev, ...rest] = await eventsOf(c, ref)
  t.equal(rest.length, 0)
  t.match((ev!.metadata as JsonObject).name, /^web\.[0-9a-f]+$/)
  t.equal((ev!.metadata as JsonObject).name, `web.${(BigInt(Date.parse('2026-03-04T05:06:07.890Z')) * 1_000_000n).toString(16)}`)
  t.same(ev!.involvedObject, { kind: 'Pod', namespace: 'default', name: 'web', uid: ref.uid, apiVersion: 'v1', resourceVersion: '7', fieldPath: 'spec.containers{main}' })
  t.same(ev!.source, { component: 'orchlet', host: 'node-a' })
  t.match(ev, { reason: 'Started', message: 'Started container main', type: 'Normal', count: 1, firstTimestamp: '2026-03-04T05:06:07Z', lastTimestamp: '2026-03-04T05:06:07Z', reportingComponent: 'orchlet', reportingInstance: 'node-a' })
})

t.test('aggregates a repeated event into one object with a count and the last time', async t => {
  const c = client(t)
  let now = Date.parse('2026-03-04T05:00:00Z')
  const rec = createEventRecorder({ client: c, component: 'orchlet', host: 'node-a', qps: 50, burst: 100, logger, now: () => now })
  const ref = podRef('crashy', 'spec.containers{main}')
  const msg = 'Back-off restarting failed container main in pod crashy_default(x)'
  rec.event(ref, 'Warning', 'BackOff', msg)
  now += 10_000
  rec.event(ref, 'Warning', 'BackOff', msg)
  now += 10_000
  rec.event(ref, 'Warning', 'BackOff', msg)
  rec.event(ref, 'Warning', 'BackOff', 'a different message')
  await rec.flush()
  const events = await eventsOf(c, ref)
  t.equal(events.length, 2, 'a different message is a different event')
  const backoff = events.find(e => e.message === msg)!
  t.equal(backoff.count, 3)
  t.equal(backoff.firstTimestamp, '2026-03-04T05:00:00Z')
  t.equal(backoff.lastTimestamp, '2026-03-04T05:00:20Z')
})

t.test('a deleted aggregated event is created anew', async t => {
  const c = client(t)
  const rec = createEventRecorder({ client: c, component: 'orchlet', host: 'node-a', qps: 50, burst: 100, logger })
  const ref = podRef('gone')
  rec.event(ref, 'Normal', 'Pulled', 'x')
  await rec.flush()
  const [first] = await eventsOf(c, ref)
  await c.delete(`/api/v1/namespaces/default/events/${(first!.metadata as JsonObject).name as string}`, { exempt: true })
  rec.event(ref, 'Normal', 'Pulled', 'x')
  await rec.flush()
  const after = await eventsOf(c, ref)
  t.equal(after.length, 1)
  t.equal(after[0]!.count, 1)
})

t.test('node events, which have no namespace, go to the default namespace', async t => {
  const c = client(t)
  const rec = createEventRecorder({ client: c, component: 'orchlet', host: 'node-b', qps: 50, burst: 100, logger })
  rec.event({ kind: 'Node', name: 'node-b', uid: 'node-b' }, 'Normal', 'NodeReady', 'Node node-b status is now: NodeReady')
  await rec.flush()
  const list = await c.get('/api/v1/namespaces/default/events', { exempt: true, query: { fieldSelector: 'involvedObject.kind=Node,involvedObject.name=node-b' } })
  const items = list.items as JsonObject[]
  t.equal(items.length, 1)
  t.same(items[0]!.involvedObject, { kind: 'Node', name: 'node-b', uid: 'node-b' })
})

t.test('spaces writes by --event-qps/--event-burst, exempt from the API qps', async t => {
  const c = client(t)
  let virtual = 0
  const sleeps: number[] = []
  const clock: Clock = { now: () => virtual, sleep: async ms => { sleeps.push(ms); virtual += ms } }
  const rec = createEventRecorder({ client: c, component: 'orchlet', host: 'node-a', qps: 2, burst: 2, logger, clock })
  const ref = podRef('paced')
  for (let i = 0; i < 4; i++) rec.event(ref, 'Normal', 'Created', `Created container c${i}`)
  await rec.flush()
  t.equal((await eventsOf(c, ref)).length, 4, 'every event was written although the client qps allows one call')
  t.equal(sleeps.length, 2, 'the two events beyond the burst waited')
  t.ok(sleeps.every(ms => ms >= 499 && ms <= 500), `each waited half a second at 2 qps (${sleeps.join(', ')})`)
})

t.test('drops events about one object beyond the spam filter burst of 25', async t => {
  const c = client(t)
  const rec = createEventRecorder({ client: c, component: 'orchlet', host: 'node-a', qps: 0, burst: 0, logger })
  const ref = podRef('noisy')
  for (let i = 0; i < 30; i++) rec.event(ref, 'Warning', 'Unhealthy', `Liveness probe failed: attempt ${i}`)
  await rec.flush()
  t.equal((await eventsOf(c, ref)).length, 25)
})

t.test('standalone: without an API server events are logged', async t => {
  const lines: Array<{ o: object; m?: string }> = []
  const rec = createEventRecorder({ component: 'orchlet', host: 'node-a', qps: 50, burst: 100, logger: { info: (o, m) => lines.push({ o, m }), warn () {} } })
  rec.event(podRef('static', 'spec.containers{main}'), 'Warning', 'Failed', 'Error: ErrImageNeverPull')
  await rec.flush()
  t.same(lines, [{ o: { event: { object: 'Pod/default/static', fieldPath: 'spec.containers{main}', type: 'Warning', reason: 'Failed' } }, m: 'Error: ErrImageNeverPull' }])
})

t.test('a failing API server costs a warning, never a throw', async t => {
  const warnings: string[] = []
  const dead = createApiClient({ connection: { server: 'http://127.0.0.1:1', insecureSkipTlsVerify: false }, qps: 0, burst: 0, contentType: 'application/json', userAgent: 'test' })
  t.teardown(() => dead.close())
  const rec = createEventRecorder({ client: dead, component: 'orchlet', host: 'node-a', qps: 0, burst: 0, logger: { info () {}, warn: (_o, m) => warnings.push(m ?? '') } })
  rec.event(podRef('x'), 'Normal', 'Pulled', 'x')
  await rec.flush()
  t.same(warnings, ['could not write event'])
})
