import t from 'tap'
import { createServer, type Server } from 'node:http'
import { createServer as createTcpServer } from 'node:net'
import type { AddressInfo } from 'node:net'
import { runProbe, startProbeWorker } from './probes.js'
import type { Container } from './pod-types.js'

async function listen (server: Server | ReturnType<typeof createTcpServer>): Promise<number> {
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  return (server.address() as AddressInfo).port
}

const container = (port: number): Container => ({ name: 'c', image: 'x', ports: [{ name: 'http', containerPort: port }] })
const noExec = async () => { throw new Error('exec is not supported by this runtime') }

t.test('httpGet succeeds on 2xx/3xx, fails on other codes with the code in the message, resolves named ports', async t => {
  let code = 200
  const seen: string[] = []
  const server = createServer((req, res) => { seen.push(`${req.url} ${req.headers['x-check']}`); res.writeHead(code); res.end() })
  const port = await listen(server)
  t.teardown(() => server.close())
  const target = { host: '127.0.0.1', container: container(port), exec: noExec }
  const probe = { httpGet: { path: '/healthz', port: 'http', httpHeaders: [{ name: 'X-Check', value: 'yes' }] } }
  t.same(await runProbe(probe, target), { ok: true, message: '' })
  t.same(seen, ['/healthz yes'])
  code = 302
  t.equal((await runProbe(probe, target)).ok, true)
  code = 503
  t.same(await runProbe(probe, target), { ok: false, message: 'HTTP probe failed with statuscode: 503' })
  t.match((await runProbe({ httpGet: { port: 'nope' } }, target)).message, /not a named port/)
})

t.test('tcpSocket succeeds when the port accepts and fails when it refuses', async t => {
  const server = createTcpServer(socket => socket.end())
  const port = await listen(server)
  t.teardown(() => server.close())
  const target = { host: '127.0.0.1', container: container(port), exec: noExec }
  t.equal((await runProbe({ tcpSocket: { port } }, target)).ok, true)
  server.close()
  await new Promise(resolve => setTimeout(resolve, 20))
  const refused = await runProbe({ tcpSocket: { port } }, target)
  t.equal(refused.ok, false)
  t.equal(refused.message, `dial tcp 127.0.0.1:${port}: connect: connection refused`)
  const http = await runProbe({ httpGet: { port, path: '/healthz' } }, target)
  t.same(http, { ok: false, message: `Get "http://127.0.0.1:${port}/healthz": dial tcp 127.0.0.1:${port}: connect: connection refused` }, 'Go\'s http.Client wording')
})

t.test('exec fails with the command\'s combined output as the message', async t => {
  const exec = async (cmd: string[]) => ({ exitCode: cmd[0] === 'ok' ? 0 : 1, output: 'cat: can\'t open \'/healthy\': No such file or directory\n' })
  const target = { host: '127.0.0.1', container: container(1), exec }
  t.same(await runProbe({ exec: { command: ['ok'] } }, target), { ok: true, message: '' })
  t.same(await runProbe({ exec: { command: ['cat', '/healthy'] } }, target), { ok: false, message: 'cat: can\'t open \'/healthy\': No such file or directory\n' })
})

t.test('exec fails with the runtime\'s reason when the runtime cannot exec', async t => {
  const r = await runProbe({ exec: { command: ['true'] } }, { host: '127.0.0.1', container: container(1), exec: noExec })
  t.same(r, { ok: false, message: 'exec is not supported by this runtime' })
})

t.test('a probe worker flips its verdict only after the failure and success thresholds', async t => {
  let code = 200
  const server = createServer((_req, res) => { res.writeHead(code); res.end() })
  const port = await listen(server)
  t.teardown(() => server.close())
  const changes: boolean[] = []
  const worker = startProbeWorker({
    kind: 'readiness',
    probe: { httpGet: { port }, periodSeconds: 1, failureThreshold: 2, successThreshold: 1 },
    target: { host: '127.0.0.1', container: container(port), exec: noExec },
    onChange: ok => changes.push(ok),
    active: () => true
  })
  t.teardown(() => worker.stop())
  await new Promise(resolve => setTimeout(resolve, 300))
  t.same(changes, [true], 'first success makes it ready')
  code = 500
  await new Promise(resolve => setTimeout(resolve, 1300))
  t.same(changes, [true], 'one failure is below the threshold')
  await new Promise(resolve => setTimeout(resolve, 1000))
  t.same(changes, [true, false], 'the second failure flips it')
})

t.test('an exec probe that runs past its timeout fails as the kubelet words it', async t => {
  const { RuntimeError } = await import('../runtime/runtime.js')
  const slow = async () => { throw new RuntimeError('DeadlineExceeded', 'context deadline exceeded') }
  const r = await runProbe({ exec: { command: ['sleep', '5'] }, timeoutSeconds: 1 }, { host: '127.0.0.1', container: container(1), exec: slow })
  t.same(r, { ok: false, message: 'command "sleep 5" timed out' })
})
