import t from 'tap'
import { decodedSegments, segmentsOf } from './path-segments.js'

t.test('the fast path agrees with the general form on every short path over a path-ish alphabet', async t => {
  const alphabet = ['/', 'a', '.', '%', '2', 'F', 'é', ' ']
  let checked = 0
  let mismatches: string[] = []
  const visit = (s: string): void => {
    checked++
    if (JSON.stringify(segmentsOf(s)) !== JSON.stringify(decodedSegments(s))) mismatches.push(s)
    if (s.length < 6) for (const c of alphabet) visit(s + c)
  }
  visit('')
  t.ok(checked > 100_000)
  t.same(mismatches.slice(0, 10), [])
  mismatches = []
  for (const s of ['/api/v1/namespaces/default/configmaps', '/api/v1/namespaces/default/configmaps/', '//api//v1', '/apis/apps/v1/',
    '/api/v1/namespaces/a%2Fb/pods', '/api/v1/namespaces/%zz/pods', '///', '', 'api/v1', '/api/v1/namespaces/ns/pods/p/proxy/x/']) {
    if (JSON.stringify(segmentsOf(s)) !== JSON.stringify(decodedSegments(s))) mismatches.push(s)
  }
  t.same(mismatches, [])
})

t.test('splits, trims and decodes', async t => {
  t.same(segmentsOf('/api/v1/namespaces/default/configmaps'), ['api', 'v1', 'namespaces', 'default', 'configmaps'])
  t.same(segmentsOf('//api/v1//'), ['api', 'v1'])
  t.same(segmentsOf('/'), [])
  t.equal(segmentsOf('/api//v1'), undefined)
  t.same(segmentsOf('/api/a%2Fb'), ['api', 'a/b'])
  t.equal(segmentsOf('/api/%zz'), undefined)
})
