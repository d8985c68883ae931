// Every built-in kind with a v1.29 message goes JSON -> protobuf -> JSON unchanged, as do its List, Status and
// DeleteOptions; watch frames carry the object's envelope.
import t from 'tap'
import protobuf from 'protobufjs/minimal.js'
import { builtinDefinitions } from '../../schema/builtin/catalog.js'
import { apiVersionOf } from '../decode.js'
import { decodeEnvelope } from './decode.js'
import { encodeEnvelope, encodeWatchFrame, parseGoDuration } from './encode.js'
import { ENVELOPE_PREFIX, Messages, messageName } from './messages.js'
import { sampleObject } from './sample.js'

const messages = new Messages()
const defs = builtinDefinitions()

t.test('every served built-in kind and its List round-trips through protobuf', async t => {
  let kinds = 0
  const without: string[] = []
  for (const def of defs) {
    const sample = sampleObject(def, messages)
    if (sample === undefined) { without.push(`${apiVersionOf(def)}/${def.kind}`); continue }
    kinds++
    const bytes = encodeEnvelope(sample.object, messages)
    t.same(bytes.subarray(0, 4), ENVELOPE_PREFIX)
    t.strictSame(decodeEnvelope(bytes, messages), sample.object, `${apiVersionOf(def)} ${def.kind}`)
    if (def.virtual === true) continue // create-only review kinds have no List
    const list = { apiVersion: apiVersionOf(def), kind: def.listKind, metadata: { resourceVersion: '12', continue: 'abc' }, items: [sample.object, sample.object] }
    t.strictSame(decodeEnvelope(encodeEnvelope(list, messages), messages), list, `${def.listKind}`)
  }
  t.comment(`${kinds} kinds round-trip; without a v1.29 message: ${without.join(', ') || 'none'}`)
  t.ok(kinds >= 15, 'the built-in kinds have messages')
  for (const w of without) t.equal(messageName(w.slice(0, w.lastIndexOf('/')), w.slice(w.lastIndexOf('/') + 1)), undefined)
})

t.test('the schema fields every message carries are the schema\'s own (nothing is lost in protobuf)', async t => {
  const lost = new Set<string>()
  for (const def of defs) for (const f of sampleObject(def, messages)?.schemaOnly ?? []) lost.add(f)
  t.strictSame([...lost].sort(), [], 'every schema field has a protobuf field (directly or in an embedded struct)')
})

t.test('Status and DeleteOptions round-trip', async t => {
  const status = {
    apiVersion: 'v1', kind: 'Status', metadata: {}, status: 'Failure', message: 'pods "x" not found', reason: 'NotFound',
    details: { name: 'x', kind: 'pods', causes: [{ reason: 'FieldValueRequired', message: 'Required value', field: 'spec' }] }, code: 404
  }
  t.strictSame(decodeEnvelope(encodeEnvelope(status, messages), messages), status)
  const del = { apiVersion: 'meta.k8s.io/v1', kind: 'DeleteOptions', gracePeriodSeconds: 0, propagationPolicy: 'Foreground', preconditions: { uid: 'u1', resourceVersion: '7' }, dryRun: ['All'] }
  t.strictSame(decodeEnvelope(encodeEnvelope(del, messages), messages), del)
})

t.test('a watch frame is a 4-byte length and a WatchEvent around the object\'s envelope', async t => {
  const cm = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a', resourceVersion: '5' }, data: { k: 'v' } }
  const frame = encodeWatchFrame('MODIFIED', encodeEnvelope(cm, messages))
  t.equal(frame.readUInt32BE(0), frame.length - 4)
  const r = protobuf.Reader.create(frame.subarray(4))
  t.equal(r.uint32(), (1 << 3) | 2)
  t.equal(r.string(), 'MODIFIED')
  t.equal(r.uint32(), (2 << 3) | 2)
  const ext = protobuf.Reader.create(r.bytes())
  t.equal(ext.uint32(), (1 << 3) | 2)
  t.strictSame(decodeEnvelope(ext.bytes(), messages), cm)
})

t.test('Go durations parse as Go prints them', async t => {
  t.equal(parseGoDuration('1h0m0s'), 3_600_000_000_000)
  t.equal(parseGoDuration('1.5s'), 1_500_000_000)
  t.equal(parseGoDuration('300ms'), 300_000_000)
  t.equal(parseGoDuration('-2m'), -120_000_000_000)
  t.throws(() => parseGoDuration('5 minutes'))
})
