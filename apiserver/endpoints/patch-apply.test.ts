// Server-side apply over HTTP: status codes, YAML and JSON bodies, PatchOptions checks and error Statuses.
import t, { type Test } from 'tap'
import { pino } from 'pino'
import { request } from 'undici'
import { createApiServer } from '../server.js'
import { openFixture } from '../registry/testing.js'

const APPLY = 'application/apply-patch+yaml'
const CMS = '/api/v1/namespaces/default/configmaps'

interface Reply { status: number; json: any; warning?: string }

async function start (t: Test): Promise<(method: string, path: string, body?: string, contentType?: string) => Promise<Reply>> {
  const fx = await openFixture()
  const server = createApiServer({ registry: fx.registry, logger: pino({ level: 'silent' }), requestTimeoutMs: 5000 })
  const { port } = await server.listen({ port: 0, host: '127.0.0.1' })
  t.teardown(async () => { await server.close(); await fx.close() })
  return async (method, path, body, contentType = APPLY) => {
    const r = await request(`http://127.0.0.1:${port}${path}`, { method: method as 'GET', body, headers: body === undefined ? {} : { 'content-type': contentType } })
    const raw = await r.body.text()
    let json: any
    try { json = JSON.parse(raw) } catch {}
    const w = r.headers.warning
    return { status: r.statusCode, json, warning: Array.isArray(w) ? w.join('\n') : w }
  }
}

const yamlCm = (value: string): string => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  mode: ${value}\n`

t.test('a YAML apply creates (201), a changed one updates (200), a repeat changes nothing', async t => {
  const call = await start(t)
  const created = await call('PATCH', `${CMS}/a?fieldManager=me`, yamlCm('one'))
  t.equal(created.status, 201)
  t.equal(created.json.data.mode, 'one')
  t.match(created.json.metadata.managedFields, [{ manager: 'me', operation: 'Apply', fieldsV1: { 'f:data': { 'f:mode': {} } } }])
  const changed = await call('PATCH', `${CMS}/a?fieldManager=me`, yamlCm('two'))
  t.equal(changed.status, 200)
  t.equal(changed.json.data.mode, 'two')
  const again = await call('PATCH', `${CMS}/a?fieldManager=me`, yamlCm('two'))
  t.equal(again.status, 200)
  t.equal(again.json.metadata.resourceVersion, changed.json.metadata.resourceVersion)
  const json = await call('PATCH', `${CMS}/a?fieldManager=me`, JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a' }, data: { mode: 'three' } }))
  t.equal(json.json.data.mode, 'three', 'a JSON body is YAML too')
})

t.test('a conflict is a 409 Status kubectl understands; force=true takes the field', async t => {
  const call = await start(t)
  await call('PATCH', `${CMS}/a?fieldManager=me`, yamlCm('one'))
  const r = await call('PATCH', `${CMS}/a?fieldManager=you`, yamlCm('two'))
  t.equal(r.status, 409)
  t.match(r.json, { kind: 'Status', status: 'Failure', reason: 'Conflict', code: 409, message: 'Apply failed with 1 conflict: conflict with "me": .data.mode' })
  t.same(r.json.details.causes, [{ reason: 'FieldManagerConflict', message: 'conflict with "me"', field: '.data.mode' }])
  const forced = await call('PATCH', `${CMS}/a?fieldManager=you&force=true`, yamlCm('two'))
  t.equal(forced.status, 200)
  t.equal(forced.json.data.mode, 'two')
})

t.test('bad apply requests answer a Status and change nothing', async t => {
  const call = await start(t)
  await call('PATCH', `${CMS}/a?fieldManager=me`, yamlCm('one'))
  const noManager = await call('PATCH', `${CMS}/a`, yamlCm('x'))
  t.equal(noManager.status, 422)
  t.equal(noManager.json.message, 'PatchOptions.meta.orch.io "" is invalid: fieldManager: Required value: is required for apply patch')
  const malformed = await call('PATCH', `${CMS}/a?fieldManager=me`, 'data: [unclosed\n  - x: :')
  t.equal(malformed.status, 400)
  t.match(malformed.json.message, /^error decoding YAML: /)
  const list = await call('PATCH', `${CMS}/a?fieldManager=me`, '- a\n- b\n')
  t.equal(list.status, 400)
  t.equal(list.json.message, 'error decoding YAML: error unmarshaling JSON: while decoding JSON: json: cannot unmarshal array into Go value of type map[string]interface {}')
  const managed = await call('PATCH', `${CMS}/a?fieldManager=me`, yamlCm('x') + 'metadata:\n  name: a\n  managedFields: [{manager: x}]\n')
  t.equal(managed.status, 400)
  const wrongKind = await call('PATCH', `${CMS}/a?fieldManager=me`, yamlCm('x').replace('ConfigMap', 'Secret'))
  t.equal(wrongKind.status, 400)
  const wrongVersion = await call('PATCH', `${CMS}/a?fieldManager=me`, yamlCm('x').replace('v1', 'v2'))
  t.equal(wrongVersion.status, 400)
  t.equal(wrongVersion.json.message, 'Incorrect version specified in apply patch. Specified patch version: v2, expected: v1')
  const unknown = await call('PATCH', `${CMS}/a?fieldManager=me`, yamlCm('x') + 'dat: {}\n')
  t.equal(unknown.status, 400)
  t.match(unknown.json.message, '.dat: field not declared in schema')
  const dup = await call('PATCH', `${CMS}/a?fieldManager=me&fieldValidation=Strict`, yamlCm('x') + '  mode: y\n')
  t.equal(dup.status, 400)
  t.match(dup.json.message, /^error strict decoding YAML: .*line 7: key "mode" already set in map/s)
  t.equal((await call('GET', `${CMS}/a`)).json.data.mode, 'one', 'nothing changed')
  const warned = await call('PATCH', `${CMS}/a?fieldManager=me&fieldValidation=Warn`, yamlCm('x') + '  mode: y\n')
  t.equal(warned.status, 200)
  t.match(warned.warning, 'already set in map')
  const forceElsewhere = await call('PATCH', `${CMS}/a?force=true`, JSON.stringify({ data: { mode: 'z' } }), 'application/merge-patch+json')
  t.equal(forceElsewhere.status, 422, 'force belongs to apply patches only')
})

t.test('415 lists apply among the served patch types; a missing object under /status is 404', async t => {
  const call = await start(t)
  const r = await call('PATCH', `${CMS}/a`, '{}', 'text/plain')
  t.equal(r.status, 415)
  t.match(r.json.message, 'application/strategic-merge-patch+json, application/apply-patch+yaml')
  const status = await call('PATCH', '/apis/apps/v1/namespaces/default/deployments/ghost/status?fieldManager=me',
    'apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: ghost}\nstatus: {replicas: 1}\n')
  t.equal(status.status, 404)
})
