// In-flight caps (429 with Retry-After), the request timeout (504), the header timeout, and slow clients that hold
// connections without delaying anyone else, on a real server.
import t, { type Test } from 'tap'
import { connect, type Socket } from 'node:net'
import { pino } from 'pino'
import { request } from 'undici'
import { createApiServer, type ApiServerOptions } from '../server.js'
import { openFixture } from '../registry/testing.js'

const CMS = '/api/v1/namespaces/default/configmaps'

async function start (t: Test, o: Partial<ApiServerOptions>): Promise<number> {
  const fx = await openFixture()
  const server = createApiServer({ registry: fx.registry, logger: pino({ level: 'silent' }), ...o })
  const { port } = await server.listen({ port: 0, host: '127.0.0.1' })
  t.teardown(async () => { await server.close(); await fx.close() })
  return port
}

/** A POST whose body never comes: it holds a mutating slot until the connection goes. */
function heldPost (port: number): { socket: Socket, reply: Promise<string> } {
  const socket = connect(port, '127.0.0.1')
  socket.write(`POST ${CMS} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{`)
  let out = ''
  socket.on('data', (d: Buffer) => { out += d.toString() })
  const reply = new Promise<string>(resolve => { socket.on('close', () => resolve(out)) })
  socket.on('error', () => {})
  return { socket, reply }
}

const statusOf = (raw: string): any => JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4))

t.test('past the mutating cap a request answers 429 with Retry-After; reads are counted apart', async t => {
  const port = await start(t, { inflight: { readonly: 5, mutating: 1 }, requestTimeoutMs: 30_000 })
  const held = heldPost(port)
  await new Promise(resolve => setTimeout(resolve, 200))
  const r = await request(`http://127.0.0.1:${port}${CMS}`, { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } })
  t.equal(r.statusCode, 429)
  t.equal(r.headers['retry-after'], '1')
  t.match(await r.body.json(), { kind: 'Status', reason: 'TooManyRequests', code: 429, message: 'Too many requests, please try again later.' })
  const read = await request(`http://127.0.0.1:${port}${CMS}`)
  t.equal(read.statusCode, 200, 'a read still passes')
  await read.body.dump()
  held.socket.destroy()
  await held.reply
  await new Promise(resolve => setTimeout(resolve, 100))
  const again = await request(`http://127.0.0.1:${port}${CMS}`, { method: 'POST', body: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a' } }), headers: { 'content-type': 'application/json' } })
  t.equal(again.statusCode, 201, 'the slot came back when the held client went')
  await again.body.dump()
})

t.test('a request whose body never completes is cut by the request timeout with a Status', async t => {
  const port = await start(t, { requestTimeoutMs: 1000, headersTimeoutMs: 500 })
  const held = heldPost(port)
  const raw = await held.reply
  t.match(raw, /^HTTP\/1\.1 (504|408) /)
  t.match(statusOf(raw), { kind: 'Status' })
})

t.test('headers that never finish are cut by the header timeout with a 408 Status', async t => {
  const port = await start(t, { headersTimeoutMs: 500, requestTimeoutMs: 5000 })
  const socket = connect(port, '127.0.0.1')
  socket.write('GET /api/v1/namespaces HTTP/1.1\r\nHost: x\r\n')
  let out = ''
  socket.on('data', (d: Buffer) => { out += d.toString() })
  await new Promise(resolve => socket.on('close', resolve))
  t.match(out, /^HTTP\/1\.1 408 /)
  t.match(statusOf(out), { kind: 'Status', code: 408 })
})

t.test('200 slow connections do not keep a normal request from being served, and are closed', async t => {
  const port = await start(t, { headersTimeoutMs: 1500, requestTimeoutMs: 3000 })
  const slow: Socket[] = []
  const closed: Array<Promise<void>> = []
  for (let i = 0; i < 200; i++) {
    const s = connect(port, '127.0.0.1')
    s.on('error', () => {})
    s.resume() // read what the server answers, so its close is seen
    s.write(i % 2 === 0 ? 'GET /api/v1/namespaces HTTP/1.1\r\nHost: x\r\n' : `POST ${CMS} HTTP/1.1\r\nHost: x\r\nContent-Length: 50\r\n\r\n{`)
    closed.push(new Promise(resolve => s.on('close', () => resolve())))
    slow.push(s)
  }
  await new Promise(resolve => setTimeout(resolve, 200))
  const r = await request(`http://127.0.0.1:${port}/api/v1/namespaces/default`)
  t.equal(r.statusCode, 200, 'served while 200 slow clients hold connections')
  await r.body.dump()
  await Promise.all(closed)
  t.ok(slow.every(s => s.destroyed), 'every slow connection was closed by the server')
})
