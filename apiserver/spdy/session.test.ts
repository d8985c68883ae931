import t from 'tap'
import { createServer, connect, type Socket } from 'node:net'
import type { AddressInfo } from 'node:net'
import { FrameReader, FrameType, pingFrame } from './frames.js'
import { SpdySession, type SpdyStream } from './session.js'

async function socketPair (): Promise<[Socket, Socket]> {
  const server = createServer()
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  const accepted = new Promise<Socket>(resolve => server.once('connection', resolve))
  const client = connect((server.address() as AddressInfo).port, '127.0.0.1')
  const s = await accepted
  server.close()
  return [client, s]
}

const collect = (s: SpdyStream): Promise<string> => new Promise(resolve => {
  let text = ''
  s.on('data', (d: Buffer) => { text += d.toString() })
  s.on('end', () => resolve(text))
})

t.test('a client opens typed streams, the server replies and both sides stream data until FIN', async t => {
  const [a, b] = await socketPair()
  const client = new SpdySession(a, { server: false })
  const server = new SpdySession(b, { server: true })
  const seen: string[] = []
  server.on('stream', (s: SpdyStream) => {
    seen.push(`${s.id}:${s.header('streamType') ?? ''}`)
    s.reply()
    if (s.header('streamtype') === 'stdin') {
      void collect(s).then(text => { out.end(`echo:${text}`) })
    }
    if (s.header('streamtype') === 'stdout') out = s
  })
  let out!: SpdyStream
  const stdin = client.openStream({ streamType: 'stdin' })
  const stdout = client.openStream({ streamType: 'stdout' })
  const reply = collect(stdout)
  await stdin.ready()
  stdin.end('a'.repeat(100_000))
  t.equal(await reply, `echo:${'a'.repeat(100_000)}`, 'large data crosses in several frames, FIN ends it')
  t.same(seen, ['1:stdin', '3:stdout'], 'client streams are odd, headers arrive decompressed')
  client.destroy(); server.destroy()
})

t.test('a reset stream ends for its reader and is marked aborted', async t => {
  const [a, b] = await socketPair()
  const client = new SpdySession(a, { server: false })
  const server = new SpdySession(b, { server: true })
  server.on('stream', (s: SpdyStream) => { s.reply(); s.write('partial'); setTimeout(() => s.reset(), 50) })
  const s = client.openStream({ streamType: 'stdout' })
  t.equal(await collect(s), 'partial')
  t.equal(s.aborted, true)
  client.destroy(); server.destroy()
})

t.test('a stream that is refused rejects ready(); closing the connection ends every stream', async t => {
  const [a, b] = await socketPair()
  const client = new SpdySession(a, { server: false })
  const server = new SpdySession(b, { server: true }) // no 'stream' listener: refused
  const s = client.openStream({ streamType: 'error' })
  await t.rejects(s.ready(), /reset/)
  const other = client.openStream({ streamType: 'stdout' })
  const ended = collect(other)
  server.destroy()
  t.equal(await ended, '')
  t.equal(client.closed, true)
})

t.test("the peer's pings are echoed", async t => {
  const [a, b] = await socketPair()
  const server = new SpdySession(b, { server: true })
  const reader = new FrameReader()
  const echoed = new Promise<number>(resolve => a.on('data', (d: Buffer) => {
    for (const f of reader.push(d)) if (f.kind === 'control' && f.type === FrameType.PING) resolve(f.payload.readUInt32BE(0))
  }))
  a.write(pingFrame(7))
  t.equal(await echoed, 7)
  a.destroy(); server.destroy()
})
