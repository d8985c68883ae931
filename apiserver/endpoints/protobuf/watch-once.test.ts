// The watch hub encodes each event once per media type: every protobuf watcher gets the same frame Buffer, every
// JSON watcher the same JSON Buffer, and the frames decode to the stored object.
import t from 'tap'
import protobuf from 'protobufjs/minimal.js'
import { body, ctx, jsonEncoder, openFixture, RecordingSink } from '../../registry/testing.js'
import type { WatchEncoder } from '../../registry/types.js'
import { protobufWatchEncoder } from '../watch.js'
import { decodeEnvelope } from './decode.js'
import { Messages } from './messages.js'

t.test('protobuf watch frames are encoded once per event and shared by every protobuf watcher', async t => {
  const fx = await openFixture({})
  t.teardown(() => fx.close())
  const cms = fx.registry.store('', 'v1', 'configmaps')!
  const messages = new Messages()
  let pbCalls = 0
  const inner = protobufWatchEncoder(messages)
  // Each watcher gets its own encoder object, as each request builds one; the hub shares by key.
  const counting = (): WatchEncoder => ({ key: inner.key, encode: ev => { pbCalls++; return inner.encode(ev) } })
  const from = String(fx.store.currentRevision())
  const pbSinks = Array.from({ length: 4 }, () => new RecordingSink())
  const jsonSinks = Array.from({ length: 2 }, () => new RecordingSink())
  for (const s of pbSinks) await cms.watch(ctx(), 'default', { resourceVersion: from }, counting(), s)
  for (const s of jsonSinks) await cms.watch(ctx(), 'default', { resourceVersion: from }, jsonEncoder, s)
  await cms.create(ctx(), 'default', body({ metadata: { name: 'shared' }, data: { k: 'v' } }))
  for (const s of [...pbSinks, ...jsonSinks]) await s.waitFor(1)
  t.equal(pbCalls, 1, 'one protobuf encoding for four watchers')
  for (const s of pbSinks) t.equal(s.chunks[0], pbSinks[0].chunks[0], 'the same Buffer')
  t.equal(jsonSinks[1].chunks[0], jsonSinks[0].chunks[0])
  const frame = pbSinks[0].chunks[0]
  t.equal(frame.readUInt32BE(0), frame.length - 4)
  const r = protobuf.Reader.create(frame.subarray(4))
  t.equal(r.uint32(), 10)
  t.equal(r.string(), 'ADDED')
  t.equal(r.uint32(), 18)
  const ext = protobuf.Reader.create(r.bytes())
  t.equal(ext.uint32(), 10)
  const object = decodeEnvelope(ext.bytes(), messages)
  t.strictSame(object, jsonSinks[0].events()[0].object)
})
