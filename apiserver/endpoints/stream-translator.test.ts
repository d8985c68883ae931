import t from 'tap'
import { createServer, type IncomingMessage } from 'node:http'
import { createServer as createNetServer, connect, type AddressInfo, type Socket } from 'node:net'
import { PassThrough, type Duplex } from 'node:stream'
import { WebSocket } from 'ws'
import { SpdySession, type SpdyStream } from '../spdy/session.js'
import { createStreamTranslator, type OpenUpstream, type StreamFlags } from './stream-translator.js'

const EXIT_3 = JSON.stringify({ metadata: {}, status: 'Failure', message: 'command terminated with non-zero exit code: 3', reason: 'NonZeroExitCode', details: { causes: [{ reason: 'ExitCode', message: '3' }] } })

/** An orchlet-side SPDY server on one end of a socket pair: stdin comes back upper-cased on stdout, then exit 3. */
async function fakeOrchlet (): Promise<{ open: OpenUpstream; seen: string[] }> {
  const seen: string[] = []
  const open: OpenUpstream = async () => {
    const server = createNetServer()
    await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
    const accepted = new Promise<Socket>(resolve => server.once('connection', resolve))
    const client = connect((server.address() as AddressInfo).port, '127.0.0.1')
    const far = await accepted
    server.close()
    const session = new SpdySession(far, { server: true })
    const streams = new Map<string, SpdyStream>()
    session.on('stream', (s: SpdyStream) => {
      s.reply()
      const type = s.header('streamType') ?? ''
      seen.push(type)
      streams.set(type, s)
      if (streams.size < 4) return
      let input = ''
      streams.get('stdin')!.on('data', (d: Buffer) => { input += d.toString() })
      streams.get('stdin')!.on('end', () => {
        streams.get('stdout')!.end(input.toUpperCase())
        streams.get('stderr')!.end()
        streams.get('error')!.end(EXIT_3, () => setTimeout(() => session.destroy(), 20))
      })
    })
    return { socket: client, answer: { status: 101, headers: {}, rest: Buffer.alloc(0) } }
  }
  return { open, seen }
}

async function translatingServer (flags: StreamFlags, open: OpenUpstream): Promise<{ url: string; close(): void }> {
  const translator = createStreamTranslator()
  const server = createServer()
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => translator.translate(req, socket, head, flags, open))
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  return { url: `ws://127.0.0.1:${(server.address() as AddressInfo).port}/`, close: () => { translator.close(); server.close() } }
}

function session (url: string, send: Buffer[]): Promise<{ protocol: string; messages: Buffer[] }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, ['v5.channel.k8s.io', 'v4.channel.k8s.io'])
    const messages: Buffer[] = []
    ws.on('open', () => { for (const m of send) ws.send(m) })
    ws.on('message', (d: Buffer) => messages.push(d))
    ws.on('close', () => resolve({ protocol: ws.protocol, messages }))
    ws.on('error', reject)
  })
}

t.test('v5 exec: stdin and its close reach the orchlet over SPDY, output and the exit Status come back on their channels', async t => {
  const orchlet = await fakeOrchlet()
  const srv = await translatingServer({ stdin: true, stdout: true, stderr: true, tty: false }, orchlet.open)
  t.teardown(srv.close)
  const r = await session(srv.url, [Buffer.from('\x00hello '), Buffer.from('\x00world'), Buffer.from([255, 0])])
  t.equal(r.protocol, 'v5.channel.k8s.io')
  t.same(orchlet.seen, ['error', 'stdin', 'stdout', 'stderr'], 'the streams kubectl opens, in its order')
  const stdout = r.messages.filter(m => m[0] === 1).map(m => m.subarray(1).toString()).join('')
  t.equal(stdout, 'HELLO WORLD')
  const last = r.messages[r.messages.length - 1]!
  t.equal(last[0], 3, 'the Status is the last message')
  t.same(JSON.parse(last.subarray(1).toString()), JSON.parse(EXIT_3), 'passed through unchanged (kubectl exits 3)')
})

t.test("an orchlet refusing the upgrade has its Status reported on the error channel", async t => {
  const refused: OpenUpstream = async () => {
    const body = JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', message: 'exec is not supported by the wasm runtime', reason: 'BadRequest', code: 400 })
    return { socket: new PassThrough(), answer: { status: 400, headers: {}, rest: Buffer.from(body) } }
  }
  const srv = await translatingServer({ stdin: false, stdout: true, stderr: true, tty: false }, refused)
  t.teardown(srv.close)
  const r = await session(srv.url, [])
  t.equal(r.messages.length, 1)
  t.equal(r.messages[0]![0], 3)
  t.match(JSON.parse(r.messages[0]!.subarray(1).toString()), { code: 400, message: /not supported by the wasm runtime/ })
})
