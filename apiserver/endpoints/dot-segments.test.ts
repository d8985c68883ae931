// Request paths are never normalised: `.`, `..`, their encodings and `%2F` inside a name are refused on every
// route class (400 for a name, 404 for a path that names nothing) and change nothing.
import t from 'tap'
import { request as httpRequest } from 'node:http'
import { pino } from 'pino'
import { createApiServer } from '../server.js'
import { openFixture } from '../registry/testing.js'
import { hasDotSegment, pathSegmentProblems } from './request-info.js'

interface Reply { status: number; json: any }

function raw (port: number, method: string, path: string, body?: string, type = 'application/json'): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, method, path, headers: body === undefined ? {} : { 'content-type': type } }, res => {
      let text = ''
      res.on('data', (d: Buffer) => { text += d.toString() })
      res.on('end', () => {
        let json: any
        try { json = JSON.parse(text) } catch {}
        resolve({ status: res.statusCode ?? 0, json })
      })
    })
    req.on('error', reject)
    req.end(body)
  })
}

t.test('path segment rules', async t => {
  t.same(pathSegmentProblems('..'), ["may not be '..'"])
  t.same(pathSegmentProblems('.'), ["may not be '.'"])
  t.same(pathSegmentProblems('a/b'), ["may not contain '/'"])
  t.same(pathSegmentProblems('a%b'), ["may not contain '%'"])
  t.same(pathSegmentProblems('ok'), [])
  t.ok(hasDotSegment('/api/v1/namespaces/x/configmaps/%2e%2e'))
  t.ok(hasDotSegment('/api/v1/namespaces/x/configmaps/%2E.'))
  t.ok(hasDotSegment('/api/v1/namespaces/x/configmaps/.'))
  t.notOk(hasDotSegment('/api/v1/namespaces/x/configmaps/a..b'))
})

t.test('dot and slash names on every route class answer 400/404 and change nothing', async t => {
  const fx = await openFixture()
  const server = createApiServer({ registry: fx.registry, logger: pino({ level: 'silent' }), requestTimeoutMs: 5000 })
  const { port } = await server.listen({ port: 0, host: '127.0.0.1' })
  t.teardown(async () => { await server.close(); await fx.close() })
  await raw(port, 'POST', '/api/v1/namespaces', JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'x' } }))
  await raw(port, 'POST', '/api/v1/namespaces/x/configmaps', JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'keep' } }))
  const before = await raw(port, 'GET', '/api/v1/namespaces/x')
  const names = ['%2e%2e', '%2E%2e', '..', '.', '%2e', 'a%2Fb', 'a%2fb']
  const prefixes = [
    '/api/v1/namespaces/x/configmaps/', // core, namespaced
    '/api/v1/nodes/', // core, cluster scoped
    '/apis/apps/v1/namespaces/x/deployments/', // group
    '/api/v1/namespaces/' // the namespace resource itself
  ]
  const methods: Array<[string, string | undefined, string?]> = [
    ['GET', undefined], ['DELETE', undefined], ['PUT', '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":".."}}'],
    ['PATCH', '{"metadata":{"labels":{"a":"b"}}}', 'application/merge-patch+json']
  ]
  for (const prefix of prefixes) {
    for (const name of names) {
      for (const [method, body, type] of methods) {
        const r = await raw(port, method, prefix + name, body, type)
        t.ok(r.status === 400 || r.status === 404, `${method} ${prefix}${name}: ${r.status}`)
        t.equal(r.json?.kind, 'Status', `${method} ${prefix}${name} answers a Status`)
      }
    }
  }
  const bad = await raw(port, 'GET', '/api/v1/namespaces/x/configmaps/%2e%2e')
  t.equal(bad.status, 400)
  t.equal(bad.json.message, 'Name parameter invalid: "..": may not be \'..\'')
  const slash = await raw(port, 'DELETE', '/api/v1/namespaces/x/configmaps/a%2Fb')
  t.equal(slash.json.message, 'Name parameter invalid: "a/b": may not contain \'/\'')
  for (const path of ['/api/v1/namespaces/x/configmaps/keep/%2e%2e', '/api/v1/namespaces/x/pods/%2e%2e/log',
    '/apis/apps/v1/namespaces/x/deployments/web/%2e%2e', '/api/v1/namespaces/%2e%2e/configmaps', '/api/v1/namespaces/x/%2e%2e/keep',
    '/healthz/%2e%2e/api/v1/namespaces/x/configmaps/keep', '/apis/%2e%2e/v1/namespaces/x/configmaps']) {
    const r = await raw(port, 'DELETE', path)
    t.ok(r.status === 400 || r.status === 404 || r.status === 405, `${path}: ${r.status}`)
  }
  const after = await raw(port, 'GET', '/api/v1/namespaces/x')
  t.equal(after.json.status.phase, 'Active', 'the namespace was not touched')
  t.equal(after.json.metadata.resourceVersion, before.json.metadata.resourceVersion)
  t.equal((await raw(port, 'GET', '/api/v1/namespaces/x/configmaps/keep')).status, 200, 'the configmap is still there')
})
