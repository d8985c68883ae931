// `orch apiserver` on a small disk: on a 32 MiB tmpfs (as root) and with --storage-quota-bytes on a normal temp dir,
// writes end in 507 InsufficientStorage (never a crash), reads, watches, /livez and deletes go on, /readyz lists
// [-]storage-space, writes resume by themselves after deletes, and after kill -9 every acknowledged write is there.
import t, { type Test } from 'tap'
import { execFileSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { tlsRequester } from './tls-client.js'
import { startOrch, type OrchProcess } from './orch-process.js'

const tls = tlsRequester()
const request = tls.request
t.teardown(async () => await tls.close())

const VALUE = 'x'.repeat(16_000)
const sleep = (ms: number): Promise<void> => new Promise(resolve => setTimeout(resolve, ms))

interface Answer { status: number, body: Record<string, unknown> }

async function call (method: string, url: string, body?: unknown, contentType = 'application/json'): Promise<Answer> {
  const r = await request(url, {
    method: method as 'GET',
    body: body === undefined ? undefined : JSON.stringify(body),
    headers: body === undefined ? {} : { 'content-type': contentType }
  })
  const text = await r.body.text()
  let parsed: Record<string, unknown> = {}
  try { parsed = JSON.parse(text) as Record<string, unknown> } catch { parsed = { text } }
  return { status: r.statusCode, body: parsed }
}

const configMap = (name: string): unknown => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { v: VALUE } })

/** Creates 16 kB ConfigMaps from 8 clients until the first 507; returns what was acknowledged and the refusal. */
async function fill (cms: string, prefix: string): Promise<{ acked: string[], refusal: Answer, others: number[] }> {
  const acked: string[] = []
  const others: number[] = []
  let refusal: Answer | undefined
  let next = 0
  await Promise.all(Array.from({ length: 8 }, async () => {
    while (refusal === undefined && next < 20_000) {
      const name = `${prefix}-${next++}`
      const a = await call('POST', cms, configMap(name))
      if (a.status === 201) acked.push(name)
      else if (a.status === 507) refusal ??= a
      else others.push(a.status)
    }
  }))
  if (refusal === undefined) throw new Error('never refused')
  return { acked, refusal, others }
}

function killHard (orch: OrchProcess): Promise<void> {
  return new Promise(resolve => {
    if (orch.child.exitCode !== null || orch.child.signalCode !== null) { resolve(); return }
    orch.child.once('exit', () => resolve())
    orch.child.kill('SIGKILL')
  })
}

async function restart (dataDir: string, args: string[]): Promise<OrchProcess> {
  rmSync(join(dataDir, 'kubeconfig'), { force: true }) // left by the killed server: wait for the new one's
  return await startOrch(dataDir, 30_000, args, 'apiserver')
}

async function fullDiskScenario (t: Test, dataDir: string, args: string[], quota: string): Promise<void> {
  let orch = await startOrch(dataDir, 30_000, args, 'apiserver')
  tls.use(orch.kubeconfig)
  t.teardown(async () => {
    if (t.passing()) return await killHard(orch)
    await killHard(orch)
    t.comment(orch.logs().split('\n').slice(-40).join('\n'))
  })
  let cms = `${orch.server}/api/v1/namespaces/default/configmaps`

  const { acked, refusal, others } = await fill(cms, 'cm')
  t.same(others, [], 'every write before the first 507 succeeded')
  t.ok(acked.length > 50, `${acked.length} ConfigMaps of 16 kB acknowledged before the store was full`)
  t.match(refusal.body, { kind: 'Status', apiVersion: 'v1', status: 'Failure', code: 507, reason: 'InsufficientStorage' })
  t.match(refusal.body.message, new RegExp(`^storage is full: store ${dataDir}/store is \\d+ bytes \\(\\d+ in use\\), \\d+ bytes free on its file system \\(quota ${quota}, reserve 1048576\\)$`))
  t.equal(orch.child.exitCode, null, 'the server is still running')

  // kill -9 while full and start again: everything acknowledged is there, and the store is still full
  await killHard(orch)
  orch = await restart(dataDir, args)
  cms = `${orch.server}/api/v1/namespaces/default/configmaps`
  const relisted = await call('GET', cms)
  const present = new Set((relisted.body.items as Array<{ metadata: { name: string } }>).map(i => i.metadata.name))
  t.same(acked.filter(n => !present.has(n)), [], 'restarted on the full disk with every acknowledged write')

  // every kind of write but delete is refused, as a Status, and logged once, not per request
  const patch = await call('PATCH', `${cms}/${acked[0]}`, { data: { w: '1' } }, 'application/merge-patch+json')
  t.match(patch, { status: 507, body: { reason: 'InsufficientStorage' } }, 'patch')
  const put = await call('PUT', `${cms}/${acked[0]}`, { ...(configMap(acked[0]) as object), data: { v: 'changed' } })
  t.equal(put.status, 507, 'update')
  const apply = await call('PATCH', `${cms}/applied?fieldManager=test`, configMap('applied'), 'application/apply-patch+yaml')
  t.equal(apply.status, 507, 'server-side apply')
  for (let i = 0; i < 5; i++) t.equal((await call('POST', cms, configMap(`more-${i}`))).status, 507)
  t.equal(orch.logs().split('\n').filter(l => l.includes('storage is full: refusing writes')).length, 1, 'one log line for the transition')

  // reads, lists, watches and health go on
  const got = await call('GET', `${cms}/${acked[1]}`)
  t.equal(got.status, 200, 'GET while full')
  const list = await call('GET', cms)
  t.equal(list.status, 200, 'LIST while full')
  const listed = (list.body.items as Array<{ metadata: { name: string } }>).map(i => i.metadata.name)
  t.ok(acked.every(n => listed.includes(n)), 'every acknowledged object is listed')
  const rv = (list.body.metadata as { resourceVersion: string }).resourceVersion
  const watch = await request(`${cms}?watch=1&resourceVersion=${rv}`)
  t.equal(watch.statusCode, 200, 'WATCH while full')
  let watched = ''
  watch.body.on('data', (d: Buffer) => { watched += d.toString() })
  watch.body.on('error', () => {})
  t.equal((await call('GET', `${orch.server}/livez`)).status, 200, '/livez')
  const readyz = await request(`${orch.server}/readyz?verbose`)
  const readyText = await readyz.body.text()
  t.equal(readyz.statusCode, 200, '/readyz stays 200 (the check is informational)')
  t.match(readyText, /\[-\]storage-space failed: reason withheld/)
  t.match(readyText, /readyz check passed/)

  // deletes work while full; after enough of them writes resume by themselves
  const del = await call('DELETE', `${cms}/${acked[0]}`)
  t.equal(del.status, 200, 'DELETE while full')
  const deleted = new Set([acked[0]])
  const deadline = Date.now() + 20_000
  while (!/"type":"DELETED".*"name":"cm-/.test(watched) && Date.now() < deadline) await sleep(20)
  t.match(watched, new RegExp(`"type":"DELETED","object":\\{[^]*"name":"${acked[0]}"`), 'the watch saw the delete')
  watch.body.destroy()
  let resumed: Answer | undefined
  for (const name of acked.slice(1, 120)) {
    t.equal((await call('DELETE', `${cms}/${name}`)).status, 200)
    deleted.add(name)
    if (deleted.size % 10 !== 0) continue
    for (let i = 0; i < 10 && Date.now() < deadline; i++) {
      const a = await call('POST', cms, configMap(`after-${deleted.size}-${i}`))
      if (a.status === 201) { resumed = a; break }
      await sleep(200)
    }
    if (resumed !== undefined) break
  }
  t.ok(resumed !== undefined, `writes resumed after deleting ${deleted.size} objects`)
  if (resumed !== undefined) acked.push((resumed.body.metadata as { name: string }).name)
  t.match(orch.logs(), /storage space recovered: accepting writes again/)
  const readyAfter = await (await request(`${orch.server}/readyz?verbose`)).body.text()
  t.match(readyAfter, /\[\+\]storage-space ok/)

  // the events: StorageFull (kept while it could not be written) and StorageSpaceRecovered
  let reasons: string[] = []
  for (let i = 0; i < 50 && !(reasons.includes('StorageFull') && reasons.includes('StorageSpaceRecovered')); i++) {
    const events = await call('GET', `${orch.server}/api/v1/namespaces/default/events`)
    reasons = (events.body.items as Array<{ reason: string, involvedObject: { kind: string } }>)
      .filter(e => e.involvedObject.kind === 'APIServer').map(e => e.reason)
    await sleep(100)
  }
  t.ok(reasons.includes('StorageFull') && reasons.includes('StorageSpaceRecovered'), `events: ${reasons.join(', ')}`)

  // kill -9 and restart on the same directory: every acknowledged write is there
  await killHard(orch)
  orch = await restart(dataDir, args)
  const again = await call('GET', `${orch.server}/api/v1/namespaces/default/configmaps`)
  const names = new Set((again.body.items as Array<{ metadata: { name: string } }>).map(i => i.metadata.name))
  const missing = acked.filter(n => !deleted.has(n) && !names.has(n))
  t.same(missing, [], 'no acknowledged write lost')
  t.notOk([...deleted].some(n => names.has(n)), 'no acknowledged delete undone')
  await killHard(orch)
}

let root = false
try { root = process.getuid?.() === 0 } catch { root = false }

t.test('on a full 32 MiB tmpfs', { skip: root ? false : 'mounting a tmpfs needs root' }, async t => {
  const mnt = mkdtempSync(join(tmpdir(), 'orch-full-disk-'))
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=32m', 'tmpfs', mnt])
  } catch (err) {
    rmSync(mnt, { recursive: true, force: true })
    t.plan(0, `cannot mount a tmpfs here: ${String(err)}`)
    return
  }
  // registered first, so it runs last: after the servers are killed
  t.teardown(() => {
    try { execFileSync('umount', [mnt]) } catch { try { execFileSync('umount', ['-l', mnt]) } catch {} }
    rmSync(mnt, { recursive: true, force: true })
  })
  const dataDir = join(mnt, 'data')
  mkdirSync(dataDir)
  await fullDiskScenario(t, dataDir, [], 'none')
})

t.test('at --storage-quota-bytes on a roomy disk', async t => {
  const dir = mkdtempSync(join(tmpdir(), 'orch-quota-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const dataDir = join(dir, 'data')
  await fullDiskScenario(t, dataDir, ['--storage-quota-bytes', String(6 * 1024 * 1024)], String(6 * 1024 * 1024))
})
