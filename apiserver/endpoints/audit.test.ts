// The audit step around a handler: stages (Panic, omitted ones), levels, Status responses, annotations.
import t, { type Test } from 'tap'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { request } from 'undici'
import { Auditor } from '../audit/auditor.js'
import type { AuditEvent } from '../audit/event.js'
import type { AuditSink } from '../audit/log-backend.js'
import { parsePolicy } from '../audit/policy.js'
import { internalError, isStatusError, notFound } from '../errors/status-error.js'
import { withAudit } from './audit.js'
import { readBody } from './decode.js'
import { sendError } from './encode.js'
import type { RequestHandler } from './request-limits.js'

/** A sink that keeps events in memory (the log backend is tested on its own). */
class MemorySink implements AuditSink {
  events: AuditEvent[] = []
  write (e: AuditEvent): void { this.events.push(e) }
  async close (): Promise<void> {}
}

const policy = parsePolicy(`apiVersion: audit.orch.io/v1
kind: Policy
rules:
- level: Request
  verbs: [patch]
- level: RequestResponse
  resources: [{group: "", resources: [configmaps]}]
  omitStages: [ResponseComplete]
- level: RequestResponse
`)

async function start (t: Test, inner: RequestHandler): Promise<{ url: string; sink: MemorySink }> {
  const sink = new MemorySink()
  let n = 0
  const auditor = new Auditor({ policy, sink, newId: () => `id-${++n}`, now: () => Date.parse('2026-11-25T09:00:00Z') })
  const chain = withAudit(auditor, inner)
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://x')
    chain(req, res, { url, longRunning: false, user: { username: 'u', groups: ['g'] } })
      .catch(err => { if (!res.headersSent) sendError(req, res, isStatusError(err) ? err : internalError(err)) })
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => server.close())
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, sink }
}

const settle = async (): Promise<void> => await new Promise(resolve => setTimeout(resolve, 20))

t.test('an unexpected error is the Panic stage, with no ResponseComplete', async t => {
  const { url, sink } = await start(t, async () => { throw new Error('boom') })
  const r = await request(url + '/api/v1/namespaces/a/pods')
  await r.body.text()
  t.equal(r.statusCode, 500)
  t.equal(r.headers['audit-id'], 'id-1')
  await settle()
  t.same(sink.events.map(e => e.stage), ['RequestReceived', 'Panic'])
  t.same(sink.events[1].responseStatus, { metadata: {}, status: 'Failure', reason: 'InternalError', message: "APIServer panic'd: Error: boom", code: 500 })
})

t.test('a StatusError thrown inside is the ResponseComplete status', async t => {
  const { url, sink } = await start(t, async () => { throw notFound({ group: '', resource: 'pods' }, 'p') })
  const r = await request(url + '/api/v1/namespaces/a/pods/p')
  await r.body.text()
  await settle()
  t.match(sink.events.at(-1), { stage: 'ResponseComplete', responseStatus: { code: 404, status: 'Failure', reason: 'NotFound', message: 'pods "p" not found', details: { name: 'p', kind: 'pods' } } })
})

t.test('Request level keeps the request object (a patch) but not the response', async t => {
  const { url, sink } = await start(t, async (req, res) => {
    await readBody(req)
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"kind":"Deployment"}')
  })
  const r = await request(url + '/apis/apps/v1/namespaces/a/deployments/d', { method: 'PATCH', body: '{"spec":{"replicas":3}}', headers: { 'content-type': 'application/merge-patch+json' } })
  await r.body.text()
  await settle()
  const done = sink.events.at(-1)
  t.match(done, { level: 'Request', verb: 'patch', objectRef: { resource: 'deployments', apiGroup: 'apps', apiVersion: 'v1', namespace: 'a', name: 'd' }, requestObject: { spec: { replicas: 3 } } })
  t.notOk(done !== undefined && 'responseObject' in done)
})

t.test('omitStages: ResponseComplete leaves only RequestReceived', async t => {
  const { url, sink } = await start(t, async (_req, res) => { res.end('{}') })
  const r = await request(url + '/api/v1/namespaces/a/configmaps/c')
  await r.body.text()
  await settle()
  t.same(sink.events.map(e => e.stage), ['RequestReceived'])
})

t.test('a Status response body fills responseStatus; YAML responses are logged as objects', async t => {
  const { url, sink } = await start(t, async (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/yaml' }).end('kind: Status\nstatus: Success\ndetails:\n  name: x\n')
  })
  const r = await request(url + '/apis/batch/v1/namespaces/a/jobs/x', { method: 'DELETE' })
  await r.body.text()
  await settle()
  t.match(sink.events.at(-1), { verb: 'delete', responseStatus: { metadata: {}, code: 200, status: 'Success', details: { name: 'x' } }, responseObject: { kind: 'Status' } })
})

t.test('later steps annotate the event through target.audit (first value wins)', async t => {
  const { url, sink } = await start(t, async (_req, res, target) => {
    target.audit?.annotate('example.orch.io/a', '1')
    target.audit?.annotate('example.orch.io/a', '2')
    res.end()
  })
  const r = await request(url + '/apis/batch/v1/namespaces/a/jobs')
  await r.body.text()
  await settle()
  t.same(sink.events.at(-1)?.annotations, { 'example.orch.io/a': '1' })
  t.notOk('annotations' in sink.events[0], 'RequestReceived is before the annotation')
})

t.test('events can be written as audit.k8s.io/v1 for Kubernetes tooling', async t => {
  const sink = new MemorySink()
  const auditor = new Auditor({ policy, sink, eventApiVersion: 'audit.k8s.io/v1' })
  const server = createServer((req, res) => {
    void withAudit(auditor, async (_req, r) => { r.end() })(req, res, { url: new URL(req.url ?? '/', 'http://x'), longRunning: false, user: { username: 'u', groups: [] } })
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => server.close())
  const r = await request(`http://127.0.0.1:${(server.address() as AddressInfo).port}/version`)
  await r.body.text()
  await settle()
  t.same(sink.events.map(e => e.apiVersion), ['audit.k8s.io/v1', 'audit.k8s.io/v1'])
})
