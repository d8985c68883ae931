// CRD validation rules off the event loop, over real HTTP: a write whose rules run to the deadline gets
// Kubernetes' budget error while a GET on the same server is answered; `orch`'s pool appears with the
// first CRD with rules and leaves no thread after stop.

import t from 'tap'
import { mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pino } from 'pino'
import { tlsRequester } from './tls-client.js'
import { createApiServer } from '../apiserver/server.js'
import { createRegistry } from '../apiserver/registry/registry.js'
import { lazyCelRules } from '../apiserver/registry/cel-rules.js'
import { openLmdbStore } from '../apiserver/storage/lmdb/index.js'
import { startControlPlane } from '../apiserver/cli/up.js'
import { parseFlags } from '../apiserver/cli/args.js'
import { SECURITY_FLAGS, securityOptions } from '../apiserver/cli/security-flags.js'
import { createSandboxPool } from '../sandbox/pool.js'
import { attackCrd, attackObject, attackPath } from './fixtures/cel-attack.js'

const logger = pino({ level: 'silent' })
// Raw requests; once `orch` runs in process below, with its administrator's credentials over HTTPS.
const tls = tlsRequester()
const request = tls.request
t.teardown(async () => await tls.close())
const BUDGET = 'Invalid value: "object": validation failed due to running out of cost budget, no further validation rules will be run'
const CM = '/api/v1/namespaces/default/configmaps'

/** OS threads of this process (each worker thread is one). */
const osThreads = (): number => readdirSync('/proc/self/task').length

async function call (base: string, method: string, path: string, body?: unknown): Promise<{ status: number, json: any }> {
  const r = await request(base + path, { method: method as 'GET', body: body === undefined ? undefined : JSON.stringify(body), headers: body === undefined ? {} : { 'content-type': 'application/json' } })
  const text = await r.body.text()
  return { status: r.statusCode, json: text === '' ? undefined : JSON.parse(text) }
}

async function until (check: () => boolean | Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 1000; i++) {
    if (await check()) return
    await new Promise(resolve => setTimeout(resolve, 10))
  }
  throw new Error(`timed out waiting for ${what}`)
}

async function serveAttackCrd (base: string): Promise<void> {
  const crd = await call(base, 'POST', '/apis/apiextensions.orch.io/v1/customresourcedefinitions', attackCrd())
  if (crd.status !== 201) throw new Error(`CRD create answered ${crd.status}: ${JSON.stringify(crd.json)}`)
  await until(async () => (await call(base, 'GET', attackPath('default'))).status === 200, 'the CRD to be served')
}

t.test('a GET is answered while a write\'s rules run to the deadline, and the write gets the budget error', async t => {
  const dir = mkdtempSync(join(tmpdir(), 'orch-cel-'))
  const pool = createSandboxPool({ size: 1, limits: { deadlineMs: 1000 } })
  const cel = lazyCelRules(() => pool)
  const store = await openLmdbStore({ path: dir })
  const registry = createRegistry({ store, logger, celRules: cel })
  await registry.start()
  const server = createApiServer({ registry, logger })
  const { port } = await server.listen({ port: 0 })
  t.teardown(async () => {
    await server.close()
    await registry.stop()
    await cel.dispose()
    await store.close()
    rmSync(dir, { recursive: true, force: true })
  })
  const base = `http://127.0.0.1:${port}`
  await serveAttackCrd(base)
  t.equal((await call(base, 'POST', CM, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'probe' } })).status, 201)

  let writeAnswered = false
  const write = call(base, 'POST', attackPath('default'), attackObject('slow')).finally(() => { writeAnswered = true })
  await until(() => pool.stats().busy === 1, 'the rules to start running')
  const get = await call(base, 'GET', `${CM}/probe`)
  t.equal(get.status, 200)
  t.equal(get.json.metadata.name, 'probe')
  t.equal(writeAnswered, false, 'the GET was answered while the rules were still running')

  const w = await write
  t.equal(w.status, 422)
  t.equal(w.json.reason, 'Invalid')
  t.same(w.json.details.causes, [{ reason: 'FieldValueInvalid', message: BUDGET, field: '<nil>' }])
  t.equal((await call(base, 'GET', `${attackPath('default')}/slow`)).status, 404, 'nothing was stored')
})

t.test('orch makes its rule threads with the first CRD carrying rules and stops them with the server', async t => {
  const dir = mkdtempSync(join(tmpdir(), 'orch-cel-up-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const cp = await startControlPlane({ dataDir: dir, port: 0, bindAddress: '127.0.0.1', logger, celWorkers: 1, security: securityOptions(parseFlags([], SECURITY_FLAGS).flags) })
  tls.use(cp.kubeconfigPath)
  let stopped = false
  t.teardown(async () => { if (!stopped) await cp.stop() })
  const idle = osThreads()
  await call(cp.url, 'POST', CM, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'plain' } })
  t.equal(osThreads(), idle, 'no rule thread before a CRD with rules')
  await serveAttackCrd(cp.url)
  const w = await call(cp.url, 'POST', attackPath('default'), attackObject('slow'))
  t.equal(w.status, 422)
  t.same(w.json.details.causes, [{ reason: 'FieldValueInvalid', message: BUDGET, field: '<nil>' }])
  const running = osThreads()
  t.ok(running > idle, `a rule thread runs (${idle} -> ${running} OS threads)`)
  await cp.stop()
  stopped = true
  t.ok(osThreads() <= idle, 'no rule thread is left after stop')
})
