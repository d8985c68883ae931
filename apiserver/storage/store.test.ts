// withRevision: how a store that learns the revision at commit writes it into bytes encoded for PENDING_REVISION.
import t from 'tap'
import { PENDING_REVISION, withRevision } from './store.js'

const P = String(PENDING_REVISION)

t.test('the resourceVersion field holding the pending revision gets the revision, even after the same digits elsewhere', async t => {
  const bytes = Buffer.from(`{"metadata":{"name":"n${P}","resourceVersion":"${P}"},"spec":{"x":"${P}"}}`)
  t.equal(withRevision(bytes, 42).toString(), `{"metadata":{"name":"n${P}","resourceVersion":"42"},"spec":{"x":"${P}"}}`)
})

t.test('a ConfigMap whose data holds the digits keeps them: only metadata.resourceVersion changes', async t => {
  const cm = (rv: string): string => JSON.stringify({
    apiVersion: 'v1', kind: 'ConfigMap',
    metadata: { name: `cm-${P}`, namespace: 'default', uid: 'u', resourceVersion: rv },
    data: { a: P, b: `before ${P} after`, json: `{"resourceVersion":"${P}"}` }
  })
  t.equal(withRevision(Buffer.from(cm(P)), 1234).toString(), cm('1234'))
})

t.test('data before metadata (not the registry\'s order), even a quoted resourceVersion field in a string, stays as it is', async t => {
  const bytes = Buffer.from(JSON.stringify({ data: { a: P, json: `{"resourceVersion":"${P}"}` }, metadata: { resourceVersion: P } }))
  const out = JSON.parse(withRevision(bytes, 9).toString()) as { data: Record<string, string>, metadata: { resourceVersion: string } }
  t.same(out, { data: { a: P, json: `{"resourceVersion":"${P}"}` }, metadata: { resourceVersion: '9' } })
})

t.test('an object stored with its real revision is handed out unchanged, whatever digits its data holds', async t => {
  const withData = Buffer.from(JSON.stringify({ metadata: { name: 'cm', resourceVersion: '17' }, data: { a: P } }))
  t.equal(withRevision(withData, 18), withData, 'data with the digits: the same buffer')
  const nested = Buffer.from(JSON.stringify({ metadata: { name: 'cr', resourceVersion: '17' }, spec: { resourceVersion: P } }))
  t.equal(withRevision(nested, 18), nested, 'a nested field named resourceVersion holding the digits: the same buffer')
  const noField = Buffer.from(JSON.stringify({ rv: Number(P), p: P }))
  t.equal(withRevision(noField, 18), noField, 'JSON without a resourceVersion field: the same buffer')
})

t.test('other bytes get it at the first occurrence of the digits; bytes without them come back unchanged', async t => {
  t.equal(withRevision(Buffer.from(`k/1@${P}`), 7).toString(), 'k/1@7')
  const plain = Buffer.from('{"metadata":{"resourceVersion":"12"}}')
  t.equal(withRevision(plain, 13), plain, 'the same buffer')
})
