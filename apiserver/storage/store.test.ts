// withRevision: how a store that learns the revision at commit writes it into bytes encoded for PENDING_REVISION.
import t from 'tap'
import { PENDING_REVISION, withRevision } from './store.js'

const P = String(PENDING_REVISION)

t.test('the resourceVersion field holding the pending revision gets the revision, even after the same digits elsewhere', async t => {
  const bytes = Buffer.from(`{"metadata":{"name":"n${P}","resourceVersion":"${P}"},"spec":{"x":"${P}"}}`)
  t.equal(withRevision(bytes, 42).toString(), `{"metadata":{"name":"n${P}","resourceVersion":"42"},"spec":{"x":"${P}"}}`)
})

t.test('other bytes get it at the first occurrence of the digits; bytes without them come back unchanged', async t => {
  t.equal(withRevision(Buffer.from(`k/1@${P}`), 7).toString(), 'k/1@7')
  const plain = Buffer.from('{"metadata":{"resourceVersion":"12"}}')
  t.equal(withRevision(plain, 13), plain, 'the same buffer')
})
