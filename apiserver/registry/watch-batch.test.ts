// WatchBatch: the joined events and their one-chunk HTTP framing.
import t from 'tap'
import { WatchBatch } from './watch-batch.js'

t.test('the frame is one HTTP chunk: hex length, CRLF, the events back to back, CRLF', async t => {
  const evs = [Buffer.from('{"a":1}\n'), Buffer.from('x'.repeat(300) + '\n')]
  const b = new WatchBatch(evs)
  t.equal(b.length, 309)
  t.equal(b.chunkedFrame().toString(), `135\r\n{"a":1}\n${'x'.repeat(300)}\n\r\n`)
  t.equal(b.payload().toString(), Buffer.concat(evs).toString())
  t.equal(b.chunkedFrame(), b.chunkedFrame(), 'framed once')
})

t.test('the payload of a one-event batch is that event\'s own Buffer', async t => {
  const ev = Buffer.from('{"type":"ADDED"}\n')
  t.equal(new WatchBatch([ev]).payload(), ev)
})

t.test('the payload of a several-event batch is a view of the frame, not a second copy', async t => {
  const b = new WatchBatch([Buffer.from('ab'), Buffer.from('cd')])
  const p = b.payload()
  t.equal(p.toString(), 'abcd')
  t.equal(p.buffer, b.chunkedFrame().buffer)
})
