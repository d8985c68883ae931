// Oversized bodies and parser errors answer a Status the client can read: a 4 MB body's 413 reaches undici and
// curl (the rest of the body is read and dropped, not reset), 431 and malformed requests carry a Status body.
import t, { type Test } from 'tap'
import { Readable } from 'node:stream'
import { execFile } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { connect } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pino } from 'pino'
import { request } from 'undici'
import { createApiServer } from '../server.js'
import { openFixture } from '../registry/testing.js'

const CMS = '/api/v1/namespaces/default/configmaps'

async function start (t: Test): Promise<number> {
  const fx = await openFixture()
  const server = createApiServer({ registry: fx.registry, logger: pino({ level: 'silent' }), requestTimeoutMs: 5000 })
  const { port } = await server.listen({ port: 0, host: '127.0.0.1' })
  t.teardown(async () => { await server.close(); await fx.close() })
  return port
}

function rawExchange (port: number, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const sock = connect(port, '127.0.0.1', () => sock.write(text))
    let out = ''
    sock.on('data', (d: Buffer) => { out += d.toString() })
    sock.on('end', () => resolve(out))
    sock.on('error', reject)
  })
}

const big = Buffer.alloc(4 * 1024 * 1024, 'a')

t.test('a 4 MB body gets its 413 Status through undici, buffered and streamed, every time', async t => {
  const port = await start(t)
  for (let i = 0; i < 8; i++) {
    const r = await request(`http://127.0.0.1:${port}${CMS}`, { method: 'POST', body: big, headers: { 'content-type': 'application/json' } })
    t.equal(r.statusCode, 413)
    t.match(await r.body.json(), { kind: 'Status', reason: 'RequestEntityTooLarge', code: 413 })
    const streamed = await request(`http://127.0.0.1:${port}${CMS}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: Readable.from((function * () { for (let j = 0; j < 64; j++) yield big.subarray(j * 65536, (j + 1) * 65536) })())
    })
    t.equal(streamed.statusCode, 413)
    t.match(await streamed.body.json(), { reason: 'RequestEntityTooLarge' })
  }
  const after = await request(`http://127.0.0.1:${port}${CMS}`)
  t.equal(after.statusCode, 200, 'the server serves on')
  await after.body.dump()
})

t.test('curl reads the 413 Status of a 4 MB body', async t => {
  const port = await start(t)
  const dir = mkdtempSync(join(tmpdir(), 'orch-413-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const file = join(dir, 'big.json')
  writeFileSync(file, big)
  for (let i = 0; i < 3; i++) {
    const out = await new Promise<string>((resolve, reject) => execFile('curl', ['-s', '-X', 'POST', '-H', 'content-type: application/json',
      '--data-binary', `@${file}`, '-w', '\n%{http_code}', `http://127.0.0.1:${port}${CMS}`], (err, stdout) => err !== null ? reject(err) : resolve(stdout)))
    const [body, code] = out.split('\n')
    t.equal(code, '413')
    t.match(JSON.parse(body), { kind: 'Status', code: 413 })
  }
})

t.test('oversized headers answer 431 and malformed requests 400, each with a Status body', async t => {
  const port = await start(t)
  const huge = await rawExchange(port, `GET ${CMS} HTTP/1.1\r\nHost: x\r\nX-Big: ${'b'.repeat(20000)}\r\n\r\n`)
  t.match(huge, /^HTTP\/1\.1 431 /)
  t.match(JSON.parse(huge.slice(huge.indexOf('\r\n\r\n') + 4)), { kind: 'Status', code: 431, reason: 'RequestHeaderFieldsTooLarge' })
  const junk = await rawExchange(port, 'NOT A REQUEST\r\n\r\n')
  t.match(junk, /^HTTP\/1\.1 400 /)
  t.match(JSON.parse(junk.slice(junk.indexOf('\r\n\r\n') + 4)), { kind: 'Status', code: 400, reason: 'BadRequest' })
})
