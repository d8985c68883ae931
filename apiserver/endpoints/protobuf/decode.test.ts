// Decoding Kubernetes protobuf bodies: envelopes built here with protobufjs by the v1.29 field numbers.
import t from 'tap'
import protobuf from 'protobufjs/minimal.js'
import { decodeEnvelope, goDuration } from './decode.js'
import { ENVELOPE_PREFIX, Messages, messageName } from './messages.js'

/** Writes field `id` as a nested message or bytes (wire type 2). */
function lengthDelimited (w: protobuf.Writer, id: number, bytes: Uint8Array): void {
  w.uint32((id << 3) | 2).bytes(bytes)
}
function str (w: protobuf.Writer, id: number, s: string): void { w.uint32((id << 3) | 2).string(s) }
function entry (k: string, v: string): Uint8Array {
  const w = protobuf.Writer.create(); str(w, 1, k); str(w, 2, v); return w.finish()
}

function envelope (apiVersion: string, kind: string, raw: Uint8Array): Buffer {
  const tm = protobuf.Writer.create(); str(tm, 1, apiVersion); str(tm, 2, kind)
  const u = protobuf.Writer.create(); lengthDelimited(u, 1, tm.finish()); lengthDelimited(u, 2, raw)
  return Buffer.concat([ENVELOPE_PREFIX, u.finish()])
}

t.test('a ConfigMap in an envelope decodes to its JSON form', async t => {
  const meta = protobuf.Writer.create()
  str(meta, 1, 'settings'); str(meta, 3, '')
  const time = protobuf.Writer.create(); time.uint32(8).int64(1700000000)
  lengthDelimited(meta, 8, time.finish())
  meta.uint32(7 << 3).int64(0)
  lengthDelimited(meta, 11, entry('app', 'web'))
  const cm = protobuf.Writer.create()
  lengthDelimited(cm, 1, meta.finish())
  lengthDelimited(cm, 2, entry('mode', 'fast'))
  lengthDelimited(cm, 2, entry('size', '3'))
  const obj = decodeEnvelope(envelope('v1', 'ConfigMap', cm.finish()), new Messages())
  t.same(obj, {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'settings', creationTimestamp: '2023-11-14T22:13:20Z', labels: { app: 'web' } },
    data: { mode: 'fast', size: '3' }
  })
})

t.test('int-or-string, quantities and repeated fields take their JSON forms', async t => {
  const messages = new Messages()
  const port = protobuf.Writer.create()
  const ios = protobuf.Writer.create(); ios.uint32(8).int64(1); str(ios, 3, '25%')
  lengthDelimited(port, 1, ios.finish())
  const ru = protobuf.Writer.create(); lengthDelimited(ru, 1, ios.finish())
  const strategy = protobuf.Writer.create(); str(strategy, 1, 'RollingUpdate'); lengthDelimited(strategy, 2, ru.finish())
  const spec = protobuf.Writer.create(); spec.uint32(1 << 3).int32(0); lengthDelimited(spec, 4, strategy.finish())
  const dep = protobuf.Writer.create(); lengthDelimited(dep, 2, spec.finish())
  const obj = decodeEnvelope(envelope('apps/v1', 'Deployment', dep.finish()), messages) as any
  t.equal(obj.spec.replicas, 0, 'an explicit zero is kept')
  t.same(obj.spec.strategy, { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: '25%' } })
})

t.test('what is not a protobuf object answers a decode error', async t => {
  const messages = new Messages()
  t.throws(() => decodeEnvelope(Buffer.from('{"kind":"ConfigMap"}'), messages), { code: 'PROTOBUF_ERR_DECODE', message: 'provided data does not appear to be a protobuf message, expected prefix [107 56 115 0]' })
  t.throws(() => decodeEnvelope(envelope('example.com/v1', 'Widget', new Uint8Array()), messages), { message: 'no protobuf message for example.com/v1, Kind=Widget' })
  t.throws(() => decodeEnvelope(Buffer.concat([ENVELOPE_PREFIX, Buffer.from([0x0a, 0xff])]), messages), { code: 'PROTOBUF_ERR_DECODE' })
})

t.test('kinds map to their messages; Go durations print as Go does', async t => {
  t.equal(messageName('v1', 'Pod'), 'k8s.io.api.core.v1.Pod')
  t.equal(messageName('apps/v1', 'Deployment'), 'k8s.io.api.apps.v1.Deployment')
  t.equal(messageName('coordination.orch.io/v1', 'Lease'), 'k8s.io.api.coordination.v1.Lease')
  t.equal(messageName('v1', 'DeleteOptions'), 'k8s.io.apimachinery.pkg.apis.meta.v1.DeleteOptions')
  t.equal(messageName('example.com/v1', 'Widget'), undefined)
  t.equal(messageName('internal.apiserver.k8s.io/v1alpha1', 'StorageVersion'), 'k8s.io.api.apiserverinternal.v1alpha1.StorageVersion')
  t.equal(messageName('flowcontrol.apiserver.k8s.io/v1', 'FlowSchema'), 'k8s.io.api.flowcontrol.v1.FlowSchema')
  t.equal(goDuration(3_600_000_000_000), '1h0m0s')
  t.equal(goDuration(1_500_000_000), '1.5s')
  t.equal(goDuration(300_000_000), '300ms')
})
