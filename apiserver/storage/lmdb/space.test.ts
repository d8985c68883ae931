// The LMDB store when space runs out, with a fake measurement (the real disk is in test/full-disk.e2e.test.ts), and
// the commit queue when a commit fails: only that batch's writes fail, nothing is left unhandled.
import t from 'tap'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openLmdbStore } from './index.js'
import { CommitQueue, type WriteOp, type WriteRequest } from './commit-queue.js'
import type { Layout } from './layout.js'
import { SpaceGuard, type SpaceUsage } from './space-guard.js'
import type { KeyValue, SpaceStatus, WatchEvent } from '../store.js'

const MiB = 1024 * 1024
const dirs: string[] = []
t.teardown(() => { for (const d of dirs) rmSync(d, { recursive: true, force: true }) })
const sleep = (ms: number): Promise<void> => new Promise(resolve => setTimeout(resolve, ms))
const codeOf = async (p: Promise<unknown>): Promise<string> => p.then(() => 'resolved', (e: { code?: string }) => e.code ?? 'other')

t.test('a full store refuses creates and updates with NoSpace, serves reads, watches and deletes, and resumes by itself', async t => {
  const path = mkdtempSync(join(tmpdir(), 'orch-space-'))
  dirs.push(path)
  let fake: Partial<SpaceUsage> | undefined
  const store = await openLmdbStore({
    path,
    spaceCheckIntervalMs: 20,
    measureSpace: measured => ({ ...measured(), ...fake })
  })
  t.teardown(() => store.close())
  const changes: SpaceStatus[] = []
  store.onSpaceChange(s => changes.push(s))
  for (let i = 0; i < 5; i++) await store.create(`k/${i}`, () => Buffer.from(`v${i}`))
  t.equal(store.space().full, false)
  const events: WatchEvent[] = []
  store.watch('k/', store.currentRevision(), { onEvents: e => events.push(...e), onError: () => {} })

  fake = { freeBytes: 0 } // the file system is full
  await sleep(50) // noticed by the periodic check (a batch measures when its last look is 250 ms old)
  const rev = store.currentRevision()
  const refused = await store.create('k/new', () => Buffer.from('x')).catch((e: unknown) => e)
  t.match(refused, { code: 'NoSpace', key: 'k/new' })
  t.match((refused as Error).message, new RegExp(`^storage is full: store ${path} is \\d+ bytes \\(\\d+ in use\\), 0 bytes free on its file system \\(quota none, reserve 1048576\\)$`))
  t.equal(await codeOf(store.update('k/1', () => Buffer.from('y'))), 'NoSpace')
  t.equal(store.currentRevision(), rev, 'refused writes take no revision')
  t.equal((await store.get('k/1'))?.value.toString(), 'v1', 'reads work')
  t.equal((await store.list('k/')).items.length, 5, 'lists work')
  const deleted = await store.delete('k/0')
  t.equal(deleted.modRevision, rev + 1, 'deletes commit')
  await sleep(30)
  t.same(events.map(e => `${e.type} ${e.key}`), ['delete k/0'], 'watches go on')
  t.equal(store.space().full, true)

  fake = undefined // space freed elsewhere: no write needed to notice
  const deadline = Date.now() + 3000
  while (store.space().full && Date.now() < deadline) await sleep(10)
  t.equal(store.space().full, false, 'left the full state by itself')
  t.equal((await store.create('k/new', () => Buffer.from('x'))).modRevision, rev + 2)
  await sleep(10)
  t.same(changes.map(c => c.full), [true, false], 'one change notice per transition')
})

t.test('the quota: writes stop at the bytes in use it allows, deletes and compaction bring them back', async t => {
  const path = mkdtempSync(join(tmpdir(), 'orch-space-'))
  dirs.push(path)
  const store = await openLmdbStore({ path, quotaBytes: 2 * MiB, retentionMs: 60_000, spaceCheckIntervalMs: 50 })
  t.teardown(() => store.close())
  const value = Buffer.alloc(16_000, 'q')
  const made: string[] = []
  for (let i = 0; i < 1000; i++) {
    try {
      await store.create(`q/${i}`, () => value)
      made.push(`q/${i}`)
    } catch (err) {
      t.match(err, { code: 'NoSpace' })
      t.match((err as Error).message, /\(quota 2097152, reserve 1048576\)$/)
      break
    }
  }
  t.ok(made.length > 20 && made.length < 70, `${made.length} writes of 16 kB fit in a 2 MiB quota`)
  t.ok(store.space().inUseBytes <= 2 * MiB + 64 * 1024, 'the bytes in use stay at the quota')
  const revAtFull = store.currentRevision()
  // while full, the store compacts to the newest revision without waiting for retention (on becoming full, and at
  // each space check after: the transition may come while the last accepted write is still being committed)
  const compactedBy = Date.now() + 5000
  while (store.compactedRevision() < revAtFull && Date.now() < compactedBy) await sleep(20)
  t.ok(store.compactedRevision() >= revAtFull, 'compacted to the newest revision while full, retention (60 s) set aside')
  for (const k of made.slice(0, 20)) await store.delete(k)
  // compaction while full frees the deleted objects' history too
  const deadline = Date.now() + 5000
  while (store.space().full && Date.now() < deadline) await sleep(20)
  t.equal(store.space().full, false, 'writes resume after deletes and compaction')
  await store.create('q/again', () => value)
})

/** A layout whose transactions run the batch and then fail as lmdb does on a full disk. */
function failingLayout (failures: { left: number }): Layout {
  const db = { get: () => undefined, putSync () {}, removeSync () {} }
  const root = {
    async childTransaction (cb: () => void): Promise<void> {
      cb()
      if (failures.left-- > 0) {
        const cause = Object.assign(new Error('Input/output error'), { code: 5 })
        const commitError = Promise.reject(cause)
        // lmdb rejects its commitError promise right after the transaction's own error: nothing handles it but us
        throw Object.assign(new Error('Commit failed (see commitError for details)'), { commitError })
      }
    },
    flushed: Promise.resolve()
  }
  return { root, live: db, log: db, hist: db, meta: db } as unknown as Layout
}

t.test('a batch whose commit fails for want of space: its writes fail with NoSpace, its deletes go again alone', async t => {
  const unhandled: unknown[] = []
  const onUnhandled = (err: unknown): void => { unhandled.push(err) }
  process.on('unhandledRejection', onUnhandled)
  t.teardown(() => { process.off('unhandledRejection', onUnhandled) })
  // room enough by the estimate, so the create reaches the commit (the disk fills from elsewhere)
  const roomy = new SpaceGuard({
    path: '/s', quotaBytes: 0, reserveBytes: 0, resumeBytes: 1, now: Date.now,
    measure: () => ({ storeBytes: 10 * MiB, inUseBytes: 10 * MiB, freeBytes: 512 * 1024 }),
    logger: { info () {}, warn () {}, error () {} }
  })
  const failures = { left: 1 }
  const published: number[] = []
  const q = new CommitQueue({
    layout: failingLayout(failures),
    now: Date.now,
    logger: { info () {}, warn () {}, error () {} },
    space: roomy,
    publish: (_e, rev) => { published.push(rev) }
  }, 10)
  const results: Array<Promise<KeyValue>> = []
  const submit = (op: WriteRequest): void => {
    results.push(new Promise((resolve, reject) => q.submit({ ...op, resolve, reject } as WriteOp)))
  }
  submit({ kind: 'create', key: 'a', encode: () => Buffer.from('a') })
  submit({ kind: 'delete', key: 'b' })
  const settled = await Promise.allSettled(results)
  t.match(settled[0], { status: 'rejected', reason: { code: 'NoSpace', key: 'a' } })
  t.match((settled[0] as PromiseRejectedResult).reason.message, /^storage is full: /)
  // the delete went again on its own and reached the store (which has no key b: NotFound, not NoSpace)
  t.match(settled[1], { status: 'rejected', reason: { code: 'NotFound', key: 'b' } })
  t.ok(roomy.isFull(), 'the failure put the guard in the full state')
  t.equal(q.committedRevision(), 10, 'nothing committed')

  failures.left = 1
  const other = new Promise((resolve, reject) => q.submit({ kind: 'delete', key: 'c', resolve, reject, retried: true } as WriteOp))
  t.match(await other.catch((e: unknown) => e), { code: 'NoSpace' }, 'a delete is retried only once')
  await sleep(50)
  t.same(unhandled, [], 'no unhandled rejection')
  t.same(published, [])
})

t.test('a commit that fails for another reason fails its batch with Internal and the queue goes on', async t => {
  const layout = failingLayout({ left: 1 })
  ;(layout.root as unknown as { childTransaction: (cb: () => void) => Promise<void> }).childTransaction = (() => {
    let first = true
    return async (cb: () => void) => {
      cb()
      if (first) { first = false; throw new Error('MDB_CORRUPTED: something else') }
    }
  })()
  const q = new CommitQueue({
    layout,
    now: Date.now,
    logger: { info () {}, warn () {}, error () {} },
    space: new SpaceGuard({
      path: '/s', quotaBytes: 0, reserveBytes: MiB, resumeBytes: 1, now: Date.now,
      measure: () => ({ storeBytes: 0, inUseBytes: 0, freeBytes: 100 * MiB }),
      logger: { info () {}, warn () {}, error () {} }
    }),
    publish: () => {}
  }, 0)
  const first = new Promise((resolve, reject) => q.submit({ kind: 'create', key: 'a', encode: () => Buffer.from('a'), resolve, reject } as WriteOp))
  t.match(await first.catch((e: unknown) => e), { code: 'Internal' })
  const second = new Promise((resolve, reject) => q.submit({ kind: 'create', key: 'b', encode: () => Buffer.from('b'), resolve, reject } as WriteOp))
  t.match(await second, { key: 'b', modRevision: 1 })
})
