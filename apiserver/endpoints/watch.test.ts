// Watch streams: default timeouts, and shared framed batches over real HTTP.
import t from 'tap'
import { Agent, createServer, request } from 'node:http'
import type { AddressInfo } from 'node:net'
import { countingSink, createWatchStream, defaultWatchTimeoutMs } from './watch.js'
import type { WatchSink } from '../registry/types.js'
import { WatchBatch } from '../registry/watch-batch.js'

t.test('a watch without timeoutSeconds lasts between --min-request-timeout and twice that', async t => {
  t.equal(defaultWatchTimeoutMs(() => 0), 1_800_000, 'kube-apiserver default: 30 minutes')
  t.equal(defaultWatchTimeoutMs(() => 0.5), 2_700_000)
  t.equal(defaultWatchTimeoutMs(() => 0, 60_000), 60_000)
  t.equal(defaultWatchTimeoutMs(() => 0.999, 60_000), 119_940)
})

t.test('shared pre-framed batches reach a real HTTP client intact, and the connection stays reusable', async t => {
  const batches = [
    new WatchBatch([Buffer.from('{"type":"ADDED","object":{"n":1}}\n'), Buffer.from('{"type":"ADDED","object":{"n":2}}\n')]),
    new WatchBatch([Buffer.from('{"type":"MODIFIED","object":{"n":1}}\n')])
  ]
  const server = createServer((req, res) => {
    if (req.url === '/plain') { res.end('after'); return }
    const stream = createWatchStream(res, {}, { timeoutMs: 60_000 })
    stream.sink.writeShared!(batches[0])
    stream.sink.write([Buffer.from('{"type":"DELETED","object":{"n":2}}\n')])
    setTimeout(() => { stream.sink.writeShared!(batches[1]); stream.sink.end() }, 10)
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => { server.close() })
  const agent = new Agent({ keepAlive: true, maxSockets: 1 })
  t.teardown(() => agent.destroy())
  const port = (server.address() as AddressInfo).port
  const get = async (path: string): Promise<{ body: string, socket: unknown, headers: Record<string, unknown> }> =>
    await new Promise((resolve, reject) => {
      request({ host: '127.0.0.1', port, path, agent }, res => {
        let body = ''
        res.setEncoding('utf8')
        res.on('data', (c: string) => { body += c })
        res.on('end', () => resolve({ body, socket: res.socket, headers: res.headers }))
      }).on('error', reject).end()
    })
  const w = await get('/watch')
  t.equal(w.headers['transfer-encoding'], 'chunked')
  t.equal(w.body.split('\n').filter(l => l !== '').map(l => JSON.parse(l).type).join(','), 'ADDED,ADDED,DELETED,MODIFIED')
  const after = await get('/plain')
  t.equal(after.body, 'after', 'the next response on the same connection parses')
  t.equal(after.socket, w.socket, 'same keep-alive connection')
})

t.test('a counted watch keeps the hub\'s shared batches shared and counts every event once', async t => {
  const seen: { shared: WatchBatch[], written: Buffer[][], ended: number } = { shared: [], written: [], ended: 0 }
  const inner: WatchSink = { write: c => { seen.written.push(c) }, writeShared: b => { seen.shared.push(b) }, end: () => { seen.ended++ } }
  const counts: number[] = []
  const sink = countingSink(inner, { sent: events => { counts.push(events.length) }, closed: () => {} })
  t.type(sink.writeShared, 'function', 'the hub hands it shared batches')
  const batch = new WatchBatch([Buffer.from('{"a":1}\n'), Buffer.from('{"b":2}\n')])
  sink.writeShared!(batch)
  sink.write([Buffer.from('{"c":3}\n')])
  sink.end()
  t.equal(seen.shared[0], batch, 'the same batch object, framed once for every watcher')
  t.same(seen.written.map(c => c.length), [1])
  t.same(counts, [2, 1])
  t.equal(seen.ended, 1)
  const plain = countingSink({ write: c => { seen.written.push(c) }, end: () => {} }, { sent: () => {}, closed: () => {} })
  plain.writeShared!(batch)
  t.same(seen.written[1].map(String), ['{"a":1}\n', '{"b":2}\n'], 'a sink without writeShared gets the events')
})
