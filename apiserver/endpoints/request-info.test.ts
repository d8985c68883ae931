import t from 'tap'
import { hasDotSegment, parseRequestInfo, requestInfoOf } from './request-info.js'
import { StatusError } from '../errors/status-error.js'

const parse = (method: string, path: string) => parseRequestInfo(method, new URL(path, 'http://x'))

t.test('parses every path shape of spec 4.1 into a RequestInfo', async t => {
  const cases: Array<[string, string, Record<string, string>]> = [
    ['GET', '/api/v1/namespaces', { resource: 'namespaces', namespace: '', name: '', verb: 'list' }],
    ['GET', '/api/v1/namespaces/default', { resource: 'namespaces', name: 'default', verb: 'get' }],
    ['PUT', '/api/v1/namespaces/default/status', { resource: 'namespaces', name: 'default', subresource: 'status', verb: 'update' }],
    ['GET', '/api/v1/namespaces/default/pods', { namespace: 'default', resource: 'pods', verb: 'list' }],
    ['GET', '/api/v1/namespaces/default/pods/p', { namespace: 'default', resource: 'pods', name: 'p', verb: 'get' }],
    ['GET', '/api/v1/namespaces/default/pods/p/status', { subresource: 'status', verb: 'get' }],
    ['GET', '/api/v1/nodes/n1', { resource: 'nodes', name: 'n1', namespace: '' }],
    ['GET', '/apis/apps/v1/namespaces/ns/deployments?watch=true', { group: 'apps', version: 'v1', verb: 'watch' }],
    ['GET', '/apis/apps/v1/namespaces/ns/deployments/d?watch=1', { name: 'd', verb: 'watch' }],
    ['GET', '/apis/apps/v1/deployments?watch=false', { namespace: '', verb: 'list' }],
    ['POST', '/apis/batch/v1/namespaces/ns/jobs', { verb: 'create' }],
    ['DELETE', '/apis/batch/v1/namespaces/ns/jobs', { verb: 'deletecollection' }],
    ['DELETE', '/apis/batch/v1/namespaces/ns/jobs/j', { verb: 'delete', name: 'j' }],
    ['PATCH', '/apis/apps/v1/namespaces/ns/deployments/d/scale', { verb: 'patch', subresource: 'scale' }]
  ]
  for (const [m, p, want] of cases) {
    const r = parse(m, p)
    if (r instanceof StatusError || r.kind !== 'resource') { t.fail(`${m} ${p}: ${String(r)}`); continue }
    t.match(r.info, want, `${m} ${p}`)
  }
})

t.test('recognizes discovery roots', async t => {
  t.same(parse('GET', '/api'), { kind: 'discovery', path: { apiPrefix: 'api' } })
  t.same(parse('GET', '/apis/apps'), { kind: 'discovery', path: { apiPrefix: 'apis', group: 'apps' } })
  t.same(parse('GET', '/apis/apps/v1'), { kind: 'discovery', path: { apiPrefix: 'apis', group: 'apps', version: 'v1' } })
  t.same(parse('GET', '/api/v1'), { kind: 'discovery', path: { apiPrefix: 'api', group: '', version: 'v1' } })
})

t.test('rejects unknown shapes with 404 and wrong methods with 405', async t => {
  for (const p of ['/', '/foo', '/api/v1/namespaces/a/pods/p/status/extra', '/api//v1']) {
    const r = parse('GET', p)
    t.ok(r instanceof StatusError && r.code === 404, p)
  }
  for (const [m, p] of [['POST', '/api/v1/namespaces/a/pods/p'], ['PUT', '/api/v1/namespaces/a/pods'], ['OPTIONS', '/api/v1/nodes'], ['DELETE', '/api/v1/nodes/n/status']]) {
    const r = parse(m, p)
    t.ok(r instanceof StatusError && r.code === 405, `${m} ${p}`)
  }
})

t.test('requestInfoOf answers as parseRequestInfo, once per URL object, and again when the method, path or URL differ', async t => {
  const url = new URL('/api/v1/namespaces/default/configmaps', 'http://x')
  const first = requestInfoOf('POST', url, url.pathname)
  t.same(first, parseRequestInfo('POST', url))
  t.equal(requestInfoOf('POST', url, url.pathname), first, 'the same answer for the same request')
  t.same(requestInfoOf('GET', url, url.pathname), parseRequestInfo('GET', url), 'another method is parsed again')
  url.searchParams.set('watch', 'true')
  const watch = requestInfoOf('GET', url, url.pathname)
  t.equal((watch as { info: { verb: string } }).info.verb, 'watch', 'a changed query is parsed again')
  t.same(requestInfoOf('GET', url, '/api/v1/nodes'), parseRequestInfo('GET', url, '/api/v1/nodes'), 'another path is parsed again')
  const other = new URL('/api/v1/namespaces/default/configmaps', 'http://x')
  t.not(requestInfoOf('POST', other, other.pathname), first, 'another URL object is its own request')
})

t.test('hasDotSegment agrees with decoding every segment on short paths', async t => {
  const general = (path: string): boolean => path.split('/').some(p => {
    let d = p
    try { d = decodeURIComponent(p) } catch {}
    return d === '.' || d === '..'
  })
  const alphabet = ['/', '.', '%', '2', 'e', 'E', 'a']
  const mismatches: string[] = []
  const visit = (s: string): void => {
    if (hasDotSegment(s) !== general(s)) mismatches.push(s)
    if (s.length < 6) for (const c of alphabet) visit(s + c)
  }
  visit('')
  t.same(mismatches.slice(0, 10), [])
  t.ok(hasDotSegment('/api/%2e%2E/x'))
  t.notOk(hasDotSegment('/api/v1/namespaces/default/configmaps'))
})
