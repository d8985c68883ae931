// Watch streams: default timeouts, and shared framed batches over real HTTP.
import t from 'tap'
import { Agent, createServer, request } from 'node:http'
import type { AddressInfo } from 'node:net'
import { createWatchStream, defaultWatchTimeoutMs } from './watch.js'
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
