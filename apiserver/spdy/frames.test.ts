import t from 'tap'
import { FLAG_FIN, FrameReader, FrameType, dataFrame, goAwayFrame, payloadStreamId, pingFrame, rstStreamFrame, synStreamFrame } from './frames.js'

t.test('control frames carry version 3, type, flags and a 24-bit length', async t => {
  const f = synStreamFrame(5, FLAG_FIN, 3, Buffer.from('hdrs'))
  t.same([...f.subarray(0, 4)], [0x80, 3, 0, FrameType.SYN_STREAM])
  t.equal(f[4], FLAG_FIN)
  t.equal(f.readUInt32BE(4) & 0xffffff, 14)
  t.equal(f.readUInt32BE(8), 5)
  t.equal(f[16], 3 << 5, 'priority in the top three bits')
})

t.test('the reader cuts frames split across chunks and tells data from control', async t => {
  const bytes = Buffer.concat([dataFrame(1, 0, Buffer.from('hello')), pingFrame(7), dataFrame(3, FLAG_FIN, Buffer.alloc(0)), rstStreamFrame(9, 5), goAwayFrame(4, 0)])
  const r = new FrameReader()
  const frames = []
  for (let i = 0; i < bytes.length; i += 3) frames.push(...r.push(bytes.subarray(i, i + 3)))
  t.equal(frames.length, 5)
  t.match(frames[0], { kind: 'data', streamId: 1, flags: 0 })
  t.equal(frames[0]!.kind === 'data' && frames[0]!.data.toString(), 'hello')
  t.match(frames[1], { kind: 'control', version: 3, type: FrameType.PING })
  t.match(frames[2], { kind: 'data', streamId: 3, flags: FLAG_FIN })
  t.match(frames[3], { kind: 'control', type: FrameType.RST_STREAM })
  t.equal(frames[3]!.kind === 'control' && payloadStreamId(frames[3]!.payload), 9)
  t.match(frames[4], { kind: 'control', type: FrameType.GOAWAY })
})
