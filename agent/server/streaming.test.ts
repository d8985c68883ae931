import t from 'tap'
import { createServer, request, type IncomingMessage } from 'node:http'
import type { AddressInfo, Socket } from 'node:net'
import { parseStreamingPath, pipeUpgrade, streamingRequest, streamingUrl, StreamingError } from './streaming.js'
import { RuntimeError, type ContainerRuntime } from '../runtime/runtime.js'

const runtime = (name: string, streaming?: ContainerRuntime['runtime']['streamingUrl']): ContainerRuntime =>
  ({ name, runtime: { streamingUrl: streaming }, images: {}, close: async () => {} }) as unknown as ContainerRuntime

t.test('the kubelet paths name the session, with or without the pod uid', async t => {
  t.same(parseStreamingPath('/exec/ns/p/c'), { kind: 'exec', namespace: 'ns', pod: 'p', container: 'c' })
  t.same(parseStreamingPath('/attach/ns/p/uid-1/c'), { kind: 'attach', namespace: 'ns', pod: 'p', container: 'c' })
  t.same(parseStreamingPath('/portForward/ns/p'), { kind: 'portforward', namespace: 'ns', pod: 'p' })
  t.equal(parseStreamingPath('/exec/ns/p'), undefined)
  t.equal(parseStreamingPath('/pods'), undefined)
})

t.test('the kubelet query becomes the CRI request; tty drops stderr; exec needs a command', async t => {
  const lookup = (): { runtime: ContainerRuntime; sandboxId: string; containerId: string } => ({ runtime: runtime('containerd'), sandboxId: 'sb', containerId: 'ct' })
  const exec = streamingRequest({ kind: 'exec', namespace: 'n', pod: 'p', container: 'c' }, new URLSearchParams('command=sh&command=-c&command=ls&input=1&output=1&error=1&tty=1'), lookup)
  t.same(exec.request, { kind: 'exec', containerId: 'ct', cmd: ['sh', '-c', 'ls'], stdin: true, stdout: true, stderr: false, tty: true })
  const pf = streamingRequest({ kind: 'portforward', namespace: 'n', pod: 'p' }, new URLSearchParams('port=80&port=x'), lookup)
  t.same(pf.request, { kind: 'portforward', podSandboxId: 'sb', ports: [80] })
  t.throws(() => streamingRequest({ kind: 'exec', namespace: 'n', pod: 'p', container: 'c' }, new URLSearchParams('output=1'), lookup), { message: 'you must specify at least one command for the container' })
  t.throws(() => streamingRequest({ kind: 'attach', namespace: 'n', pod: 'p', container: 'c' }, new URLSearchParams(), () => undefined), { code: 404 })
})

t.test('a runtime without streaming (WebAssembly) gives a clear 400', async t => {
  const err = await streamingUrl(runtime('wasm'), { kind: 'exec', containerId: 'c', cmd: ['ls'], stdin: false, stdout: true, stderr: true, tty: false }).catch(e => e)
  t.ok(err instanceof StreamingError)
  t.equal(err.code, 400)
  t.equal(err.message, 'exec is not supported by the wasm runtime')
  const unimpl = await streamingUrl(runtime('x', async () => { throw new RuntimeError('Unimplemented', 'no') }), { kind: 'portforward', podSandboxId: 's', ports: [] }).catch(e => e)
  t.equal(unimpl.code, 400)
  t.match(unimpl.message, /^port-forward is not supported by the x runtime/)
})

t.test('an upgrade is replayed to the streaming server and bytes flow both ways', async t => {
  // A real HTTP server standing in for the runtime's streaming server: it accepts the upgrade and echoes.
  const seen: Array<{ url?: string; upgrade?: string; auth?: string }> = []
  const upstream = createServer()
  upstream.on('upgrade', (req: IncomingMessage, socket: Socket) => {
    seen.push({ url: req.url, upgrade: req.headers.upgrade, auth: req.headers.authorization })
    socket.write('HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\n\r\n')
    socket.pipe(socket)
  })
  await new Promise<void>(resolve => upstream.listen(0, '127.0.0.1', resolve))
  const front = createServer()
  front.on('upgrade', (req: IncomingMessage, socket: Socket, head: Buffer) => {
    void pipeUpgrade(req, socket, head, `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/exec/TOKEN`)
  })
  await new Promise<void>(resolve => front.listen(0, '127.0.0.1', resolve))
  t.teardown(() => { upstream.close(); front.close() })
  const echoed = await new Promise<string>((resolve, reject) => {
    const req = request({ port: (front.address() as AddressInfo).port, host: '127.0.0.1', path: '/exec/n/p/c?command=ls', headers: { Connection: 'Upgrade', Upgrade: 'SPDY/3.1', Authorization: 'Bearer secret' } })
    req.on('upgrade', (_res, socket) => {
      socket.once('data', (d: Buffer) => { resolve(d.toString()); socket.destroy() })
      socket.write('ping')
    })
    req.on('error', reject)
    req.end()
  })
  t.equal(echoed, 'ping')
  t.same(seen, [{ url: '/exec/TOKEN', upgrade: 'SPDY/3.1', auth: undefined }], 'the credentials of the client hop are not replayed')
})
