import t from 'tap'
import { execFileSync } from 'node:child_process'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import * as core from './undici-core.js'

t.test('loading undici-core loads neither undici\'s index nor Node\'s bundled undici', async t => {
  // A fresh process: this test file's own process may have loaded either through other imports.
  const out = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', `
    const { createRequire } = await import('node:module')
    const core = await import(${JSON.stringify(new URL('./undici-core.ts', import.meta.url).href)})
    const pool = new core.Pool('http://127.0.0.1:1')
    await pool.close()
    const cache = Object.keys(createRequire(import.meta.url).cache)
    console.log(JSON.stringify({
      index: cache.some(f => /node_modules\\/undici\\/index\\.js$/.test(f)),
      bundled: process.moduleLoadList.includes('NativeModule internal/deps/undici/undici'),
      request: typeof pool.request
    }))`], { encoding: 'utf8' })
  t.same(JSON.parse(out.trim().split('\n').pop()!), { index: false, bundled: false, request: 'function' })
})

t.test('every export is the object undici\'s index exports', async t => {
  const undici = await import('undici')
  t.equal(core.Pool, undici.Pool)
  t.equal(core.Agent, undici.Agent)
  t.equal(core.Client, undici.Client)
  t.equal(core.ProxyAgent, undici.ProxyAgent)
  t.equal(core.errors, undici.errors)
  t.equal(core.errors.ConnectTimeoutError, undici.errors.ConnectTimeoutError)
  // The request API undici's index puts on every dispatcher is the one undici-core put there.
  t.equal(core.Pool.prototype.request, undici.Dispatcher.prototype.request)
})

t.test('request and fetch answer as undici\'s own (same request on the wire, same response)', async t => {
  const seen: string[] = []
  const server = createServer((req, res) => {
    seen.push(`${req.method} ${req.url} ${req.headers['x-probe'] ?? ''}`)
    res.setHeader('content-type', 'text/plain')
    res.end(`${req.method} ${req.url}`)
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => server.close())
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/a/b?c=1`
  const undici = await import('undici')
  const agent = new core.Agent()
  t.teardown(async () => await agent.close())
  const ours = await core.request(url, { dispatcher: agent, headers: { 'x-probe': '1' } })
  const theirs = await undici.request(url, { dispatcher: agent, headers: { 'x-probe': '1' } })
  t.equal(ours.statusCode, theirs.statusCode)
  t.equal(await ours.body.text(), await theirs.body.text())
  const fetched = await core.fetch(url, { headers: { 'x-probe': '2' }, dispatcher: agent })
  t.equal(await fetched.text(), 'GET /a/b?c=1')
  t.same(seen, ['GET /a/b?c=1 1', 'GET /a/b?c=1 1', 'GET /a/b?c=1 2'])
})
