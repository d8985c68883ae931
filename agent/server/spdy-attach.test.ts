import t from 'tap'
import { createServer, type IncomingMessage } from 'node:http'
import { connect, type AddressInfo } from 'node:net'
import type { Duplex } from 'node:stream'
import { SpdySession, type SpdyStream } from '../../apiserver/spdy/session.js'
import { requestUpgrade } from '../../apiserver/spdy/upgrade.js'
import { serveSpdyAttach } from './spdy-attach.js'

async function attachServer (lines: string[], flags = { stdin: false, stdout: true, stderr: true, tty: false }): Promise<{ port: number; close(): void }> {
  const server = createServer()
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    serveSpdyAttach(req, socket, head, flags, async (out) => {
      for (const l of lines) { out.write(l); await new Promise(resolve => setTimeout(resolve, 10)) }
    })
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  return { port: (server.address() as AddressInfo).port, close: () => { server.closeAllConnections(); server.close() } }
}

const read = (s: SpdyStream): Promise<string> => new Promise(resolve => {
  let text = ''
  s.on('data', (d: Buffer) => { text += d.toString() })
  s.on('end', () => resolve(text))
})

function upgradeHead (protocols: string): string[] {
  return ['POST /attach/default/p/c?output=1&error=1 HTTP/1.1', 'Host: orchlet', 'Connection: Upgrade', 'Upgrade: SPDY/3.1', `X-Stream-Protocol-Version: ${protocols}`]
}

t.test('a v4 SPDY attach gets the output on stdout, then a Success Status on the error stream and the end of every stream', async t => {
  const srv = await attachServer(['one\n', 'two\n'])
  t.teardown(srv.close)
  const socket = connect(srv.port, '127.0.0.1')
  const answer = await requestUpgrade(socket, upgradeHead('v4.channel.k8s.io, v3.channel.k8s.io'))
  t.equal(answer.status, 101)
  t.equal(answer.headers['x-stream-protocol-version'], 'v4.channel.k8s.io', 'the newest protocol both sides know')
  const session = new SpdySession(socket, { server: false, head: answer.rest })
  const error = session.openStream({ streamType: 'error' })
  error.end()
  const stdout = session.openStream({ streamType: 'stdout' })
  const stderr = session.openStream({ streamType: 'stderr' })
  const [status, out, err] = await Promise.all([read(error), read(stdout), read(stderr)])
  t.equal(out, 'one\ntwo\n')
  t.equal(err, '')
  t.same(JSON.parse(status), { metadata: {}, status: 'Success' })
  session.destroy()
})

t.test('under v2 a successful attach leaves the error stream empty', async t => {
  const srv = await attachServer(['x'])
  t.teardown(srv.close)
  const socket = connect(srv.port, '127.0.0.1')
  const answer = await requestUpgrade(socket, upgradeHead('v2.channel.k8s.io'))
  t.equal(answer.headers['x-stream-protocol-version'], 'v2.channel.k8s.io')
  const session = new SpdySession(socket, { server: false, head: answer.rest })
  const error = session.openStream({ streamType: 'error' })
  const stdout = session.openStream({ streamType: 'stdout' })
  const stderr = session.openStream({ streamType: 'stderr' })
  const [status, out] = await Promise.all([read(error), read(stdout), read(stderr)])
  t.equal(out, 'x')
  t.equal(status, '')
  session.destroy()
})

t.test('a client naming no protocol the orchlet serves is refused with 403', async t => {
  const srv = await attachServer([])
  t.teardown(srv.close)
  const socket = connect(srv.port, '127.0.0.1')
  const answer = await requestUpgrade(socket, upgradeHead('v9.channel.k8s.io'))
  t.equal(answer.status, 403)
  t.match(JSON.parse(answer.rest.toString()), { kind: 'Status', code: 403, message: /unable to negotiate protocol/ })
  socket.destroy()
})
