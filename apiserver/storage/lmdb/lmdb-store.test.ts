// The LMDB store: the shared conformance suite, then what only this implementation promises.
import t from 'tap'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pino } from 'pino'
import { conformanceIndexer, runStorageConformance } from '../conformance.js'
import { openLmdbStore, type LmdbStore, type LmdbStoreOptions } from './index.js'
import { encodeLive, encodeNumber, openLayout, readMetaNumber } from './layout.js'
import { encoderWithSource } from '../store.js'

const dirs: string[] = []
t.teardown(() => { for (const d of dirs) rmSync(d, { recursive: true, force: true }) })

function tempDir (): string {
  const d = mkdtempSync(join(tmpdir(), 'orch-lmdb-'))
  dirs.push(d)
  return d
}

async function open (opts: Partial<LmdbStoreOptions> = {}): Promise<LmdbStore> {
  return openLmdbStore({ path: tempDir(), ...opts })
}

t.test('conformance', async t => { runStorageConformance(t, () => open({ indexer: conformanceIndexer })) })
t.test('conformance without an index', async t => { runStorageConformance(t, () => open()) })

// The suite states revisions relative to the start, as a store on a shared etcd needs: prove it.
t.test('conformance on a store that does not start at revision 0', async t => {
  runStorageConformance(t, async () => {
    const s = await open({ indexer: conformanceIndexer })
    for (let i = 0; i < 3; i++) {
      await s.create('pre', () => Buffer.from('x'))
      await s.delete('pre')
    }
    return s
  })
})

const enc = (text: string) => (rev: number): Buffer => Buffer.from(`${text}@${rev}`)
const codeOf = async (p: Promise<unknown>): Promise<string> => p.then(() => 'resolved', (e: { code?: string }) => e.code ?? 'other')
const sleep = (ms: number): Promise<void> => new Promise(resolve => setTimeout(resolve, ms))

async function until (pred: () => boolean, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms
  while (!pred()) {
    if (Date.now() > deadline) throw new Error('condition not met in time')
    await sleep(5)
  }
}

/** Entries of the raw sub-databases, read after the store is closed. */
function rawCounts (path: string): { log: number, hist: number, live: number } {
  const layout = openLayout(path)
  try {
    return { log: layout.log.getKeysCount(), hist: layout.hist.getKeysCount(), live: layout.live.getKeysCount() }
  } finally {
    void layout.root.close()
  }
}

t.test('data, revision and compaction survive close and reopen', async t => {
  const path = tempDir()
  const a = await openLmdbStore({ path })
  for (let i = 0; i < 5; i++) await a.create(`re/${i}`, enc(`${i}`))
  await a.delete('re/0')
  await a.compact(3)
  await a.close()
  const b = await openLmdbStore({ path, logger: pino({ level: 'silent' }) })
  t.teardown(() => b.close())
  t.equal(b.currentRevision(), 6)
  t.equal(b.compactedRevision(), 3)
  t.same((await b.list('re/')).items.map(i => `${i.key}=${i.value.toString()}`), ['re/1=1@2', 're/2=2@3', 're/3=3@4', 're/4=4@5'])
  t.equal((await b.list('re/', { revision: 4 })).items.length, 4)
  const next = await b.create('re/5', enc('5'))
  t.equal(next.modRevision, 7, 'revisions continue after the last one')
})

t.test('concurrent writes are committed in shared transactions (group commit), in call order', async t => {
  const s = await open()
  t.teardown(() => s.close())
  let batches = 0
  s.watch('', 0, { onEvents () { batches++ }, onError () {} })
  const kvs = await Promise.all(Array.from({ length: 500 }, (_, i) => s.create(`gc/${i}`, enc(`${i}`))))
  t.same(kvs.map(kv => kv.modRevision), Array.from({ length: 500 }, (_, i) => i + 1), 'revisions in call order')
  await until(() => s.currentRevision() === 500)
  await sleep(10)
  t.ok(batches < 50, `500 writes arrived in ${batches} commits`)
})

t.test('an encoder that throws fails only its own write and consumes no revision', async t => {
  const s = await open()
  t.teardown(() => s.close())
  const results = await Promise.allSettled([
    s.create('enc/a', enc('a')),
    s.create('enc/bad', () => { throw new Error('boom') }),
    s.create('enc/b', enc('b'))
  ])
  t.same(results.map(r => r.status), ['fulfilled', 'rejected', 'fulfilled'])
  t.equal((results[1] as PromiseRejectedResult).reason.code, 'Internal')
  t.same((await s.list('enc/')).items.map(i => i.value.toString()), ['a@1', 'b@2'])
})

t.test('invalid keys and revisions are refused with a StorageError', async t => {
  const s = await open()
  t.teardown(() => s.close())
  for (const key of ['', 'a\0b', '\u0001x', 'k/' + 'x'.repeat(2000)]) {
    t.equal(await codeOf(s.create(key, enc('x'))), 'Internal', `key ${JSON.stringify(key.slice(0, 8))}`)
  }
  t.equal(await codeOf(s.list('a/', { revision: -1 })), 'Internal')
  t.equal(await codeOf(s.get('a/x', { revision: 1.5 })), 'Internal')
  t.equal(await codeOf(s.update('a/x', enc('x'), -3)), 'Internal')
  t.equal(s.currentRevision(), 0)
})

t.test('a list during concurrent writes is a snapshot at the revision it reports', async t => {
  const s = await open()
  t.teardown(() => s.close())
  const writes: Array<Promise<unknown>> = []
  for (let i = 0; i < 300; i++) {
    writes.push(s.create(`snap/${i}`, enc(`${i}`)))
    if (i % 25 === 0) {
      await sleep(0)
      const res = await s.list('snap/')
      t.equal(res.items.length, res.revision, `list at ${res.revision} holds exactly the writes up to it`)
      t.ok(res.items.every(kv => kv.modRevision <= res.revision))
    }
  }
  await Promise.all(writes)
})

t.test('a watch from a revision not yet reached gets only the changes after it', async t => {
  const s = await open()
  t.teardown(() => s.close())
  const revs: number[] = []
  const h = s.watch('fu/', 3, { onEvents (evs) { revs.push(...evs.map(e => e.revision)) }, onError () {} })
  for (let i = 0; i < 5; i++) await s.create(`fu/${i}`, enc(`${i}`))
  await until(() => revs.at(-1) === 5)
  t.same(revs, [4, 5])
  h.stop()
})

t.test('a watch replays a long history in several steps, then goes live', async t => {
  const s = await open()
  t.teardown(() => s.close())
  await Promise.all(Array.from({ length: 4500 }, (_, i) => s.create(`long/${i}`, enc(`${i}`))))
  const revs: number[] = []
  let batches = 0
  const h = s.watch('long/', 10, { onEvents (evs) { batches++; revs.push(...evs.map(e => e.revision)) }, onError (err) { t.fail(err.message) } })
  const live = Promise.all(Array.from({ length: 100 }, (_, i) => s.create(`long/x${i}`, enc(`${i}`))))
  await live
  await until(() => revs.at(-1) === 4600)
  t.same(revs, Array.from({ length: 4590 }, (_, i) => i + 11))
  t.ok(batches >= 3, `replayed in ${batches} batches`)
  h.stop()
})

t.test('compaction while a watch is catching up ends it with Compacted', async t => {
  const s = await open()
  t.teardown(() => s.close())
  await Promise.all(Array.from({ length: 3000 }, (_, i) => s.create(`cu/${i}`, enc(`${i}`))))
  const errors: string[] = []
  let events = 0
  s.watch('cu/', 0, { onEvents (evs) { events += evs.length }, onError (err) { errors.push(err.code) } })
  const compacting = s.compact(2500)
  await until(() => errors.length > 0)
  await compacting
  t.same(errors, ['Compacted'])
  t.ok(events <= 2000, 'stopped before replaying compacted history')
})

t.test('background compaction drops history older than the retention window (injected clock)', async t => {
  let now = 1_000_000
  const s = await open({ now: () => now, retentionMs: 1000, compactionIntervalMs: 10 })
  t.teardown(() => s.close())
  for (let i = 1; i <= 3; i++) await s.create(`ret/${i}`, enc(`${i}`))
  now += 600
  await s.update('ret/1', enc('1b')) // 4
  await s.delete('ret/2') // 5
  await sleep(40)
  t.equal(s.compactedRevision(), 0, 'nothing is older than the window yet')
  now += 600 // revisions 1..3 are now older than 1000 ms
  await until(() => s.compactedRevision() === 3)
  t.equal(await codeOf(s.list('ret/', { revision: 2 })), 'Compacted')
  t.same((await s.list('ret/', { revision: 3 })).items.map(i => i.key), ['ret/1', 'ret/2', 'ret/3'])
  t.same((await s.list('ret/', { revision: 4 })).items.map(i => i.value.toString()), ['1b@4', '2@2', '3@3'])
  now += 10_000
  await until(() => s.compactedRevision() === 5)
  t.same((await s.list('ret/')).items.map(i => i.value.toString()), ['1b@4', '3@3'], 'live data stays')
})

t.test('compaction deletes superseded versions and tombstones from disk', async t => {
  const path = tempDir()
  const s = await openLmdbStore({ path })
  await s.create('cd/keep', enc('k'))
  for (let i = 0; i < 50; i++) await (i === 0 ? s.create('cd/x', enc('0')) : s.update('cd/x', enc(`${i}`)))
  await s.create('cd/gone', enc('g'))
  await s.delete('cd/gone')
  await s.compact(s.currentRevision())
  await s.close()
  t.same(rawCounts(path), { log: 2, hist: 2, live: 2 }, 'one version per live key remains')
})

t.test('an interrupted compaction is finished on the next open', async t => {
  const path = tempDir()
  const s = await openLmdbStore({ path })
  for (let i = 0; i < 30; i++) await (i === 0 ? s.create('ic/x', enc('0')) : s.update('ic/x', enc(`${i}`)))
  await s.close()
  const layout = openLayout(path)
  layout.meta.putSync('compacted', encodeNumber(30)) // as if killed right after recording the target
  await layout.root.close()
  const again = await openLmdbStore({ path })
  t.equal(again.compactedRevision(), 30)
  t.equal(await codeOf(again.get('ic/x', { revision: 29 })), 'Compacted')
  t.equal((await again.get('ic/x', { revision: 30 }))?.value.toString(), '29@30')
  await again.compact(30) // waits for the resumed compaction
  await again.close()
  t.same(rawCounts(path), { log: 1, hist: 1, live: 1 })
})

t.test('keys too long to be stored read as absent', async t => {
  const s = await open()
  t.teardown(() => s.close())
  const long = 'k/' + 'x'.repeat(3000)
  t.equal(await s.get(long), undefined)
  t.same((await s.list(long)).items, [])
  t.equal(await s.count(long), 0)
})

t.test('retention compaction finds the newest revision older than the window', async t => {
  let now = 5_000_000
  const s = await open({ now: () => now, retentionMs: 500, compactionIntervalMs: 60_000 })
  t.teardown(() => s.close())
  for (let i = 1; i <= 100; i++) {
    await s.create(`bs/${i}`, enc(`${i}`)) // revision i committed at 5_000_000 + 10 * (i - 1)
    now += 10
  }
  now = 5_000_000 + 10 * 36 + 500 // revision 37 is exactly at the edge of the window
  await s.compactExpired()
  t.equal(s.compactedRevision(), 37)
  now += 10_000
  await s.compactExpired()
  t.equal(s.compactedRevision(), 100)
  t.equal((await s.list('bs/')).items.length, 100)
})

t.test('a refused write never calls its encoder', async t => {
  const s = await open()
  t.teardown(() => s.close())
  await s.create('ne/x', enc('one'))
  let calls = 0
  const counting = (rev: number): Buffer => { calls++; return Buffer.from(String(rev)) }
  t.equal(await codeOf(s.create('ne/x', counting)), 'KeyExists')
  t.equal(await codeOf(s.update('ne/x', counting, 7)), 'Conflict')
  t.equal(await codeOf(s.update('ne/none', counting)), 'NotFound')
  t.equal(calls, 0)
})

t.test('a watch whose callback throws is ended; other watches go on', async t => {
  const s = await open()
  t.teardown(() => s.close())
  const errors: string[] = []
  let good = 0
  s.watch('th/', 0, { onEvents () { throw new Error('consumer bug') }, onError (err) { errors.push(err.code) } })
  const other = s.watch('th/', 0, { onEvents (evs) { good += evs.length }, onError (err) { errors.push(err.code) } })
  await s.create('th/1', enc('1'))
  await s.create('th/2', enc('2'))
  await until(() => good === 2)
  t.same(errors, ['Internal'])
  t.equal(s.watchCount(), 1)
  other.stop()
  t.equal(s.watchCount(), 0)
})

t.test('after close, reads, writes, watches and compaction fail with StoreClosed', async t => {
  const s = await open()
  await s.create('ac/1', enc('1'))
  await s.close()
  t.equal(await codeOf(s.get('ac/1')), 'StoreClosed')
  t.equal(await codeOf(s.list('ac/')), 'StoreClosed')
  t.equal(await codeOf(s.count('ac/')), 'StoreClosed')
  t.equal(await codeOf(s.delete('ac/1')), 'StoreClosed')
  t.equal(await codeOf(s.compact(1)), 'StoreClosed')
  const errors: string[] = []
  s.watch('ac/', 0, { onEvents () { t.fail('no events after close') }, onError (err) { errors.push(err.code) } })
  await until(() => errors.length === 1)
  t.same(errors, ['StoreClosed'])
})

t.test('the index narrows lists at the current revision and is rebuilt when missing or of another scheme', async t => {
  const path = tempDir()
  const terms = (s: LmdbStore, term: string): Promise<string[]> => s.list('i/', { index: [term] }).then(r => r.items.map(kv => kv.key))
  let s = await openLmdbStore({ path })
  await s.create('i/1', enc('tags:a'))
  await s.create('i/2', enc('tags:b'))
  t.same(await terms(s, 't:a'), ['i/1', 'i/2'], 'no indexer: the hint is ignored')
  await s.close()
  s = await openLmdbStore({ path, indexer: conformanceIndexer })
  t.same(await terms(s, 't:a'), ['i/1'], 'built from the live values on open')
  await s.update('i/2', enc('tags:a,b'))
  await s.delete('i/1')
  t.same(await terms(s, 't:a'), ['i/2'], 'kept with every write')
  t.same(await terms(s, 't:b'), ['i/2'])
  await s.close()
  s = await openLmdbStore({ path }) // writes without the index: it must not be trusted afterwards
  await s.create('i/3', enc('tags:a'))
  await s.close()
  s = await openLmdbStore({ path, indexer: conformanceIndexer })
  t.same(await terms(s, 't:a'), ['i/2', 'i/3'], 'rebuilt after a run without it')
  await s.close()
  const layout = openLayout(path) // a write as a build that knows no index makes it
  await layout.root.transaction(() => {
    const rev = readMetaNumber(layout, 'rev') + 1
    layout.live.putSync('i/4', encodeLive(rev, rev, Buffer.from(`tags:a@${rev}`)))
    layout.meta.putSync('rev', encodeNumber(rev))
  })
  await layout.root.close()
  s = await openLmdbStore({ path, indexer: conformanceIndexer })
  t.same(await terms(s, 't:a'), ['i/2', 'i/3', 'i/4'], 'rebuilt after writes of a build without indexes')
  await s.close()
  s = await openLmdbStore({ path, indexer: { version: 'other', terms: (_k, v) => v.toString().startsWith('tags:a') ? ['first-a'] : [] } })
  t.same(await terms(s, 'first-a'), ['i/2', 'i/3', 'i/4'], 'rebuilt for another scheme')
  t.same(await terms(s, 't:a'), [], 'old terms gone')
  await s.close()
})

t.test('the index records the last revision of every batch it took, so a reopen trusts it', async t => {
  const path = tempDir()
  let s = await openLmdbStore({ path, indexer: conformanceIndexer })
  // queued together: one batch, a refused duplicate in the middle and last
  const writes = await Promise.allSettled([s.create('r/1', enc('tags:a')), s.create('r/2', enc('tags:b')), s.create('r/1', enc('tags:c')),
    s.create('r/3', enc('tags:a')), s.create('r/2', enc('tags:d'))])
  t.same(writes.map(w => w.status), ['fulfilled', 'fulfilled', 'rejected', 'fulfilled', 'rejected'])
  await s.delete('r/1')
  await s.create('r/1', enc('untagged'))
  await s.close()
  const layout = openLayout(path)
  const rev = readMetaNumber(layout, 'rev')
  t.equal(readMetaNumber(layout, 'indexRev'), rev, 'as when each change wrote its own revision')
  t.ok(rev >= 5)
  await layout.root.close()
  const logged: string[] = []
  const logger = pino({ level: 'info' }, { write: (line: string) => { logged.push(JSON.parse(line).msg) } })
  s = await openLmdbStore({ path, indexer: conformanceIndexer, logger })
  t.notOk(logged.includes('storage index rebuilt'), 'not rebuilt on open')
  t.same(await s.list('r/', { index: ['t:a'] }).then(r => r.items.map(kv => kv.key)), ['r/3'])
  await s.close()
})

t.test('index terms that prefix one another stay apart', async t => {
  const s = await open({ indexer: conformanceIndexer })
  t.teardown(() => s.close())
  await s.create('p/1', enc('tags:ab'))
  await s.create('p/2', enc('tags:a'))
  await s.create('p/3', enc('tags:a,ab'))
  await s.create('p/4', enc('tags:b'))
  const keys = async (terms: string[], limit = 0): Promise<string[]> => (await s.list('p/', { index: terms, limit })).items.map(kv => kv.key)
  t.same(await keys(['t:a']), ['p/2', 'p/3'])
  t.same(await keys(['t:ab']), ['p/1', 'p/3'])
  t.same(await keys(['t:a', 't:ab']), ['p/1', 'p/2', 'p/3'], 'a union, once each, in key order')
  t.same(await keys(['t:a', 't:ab'], 2), ['p/1', 'p/2'])
  t.same(await keys(['t:']), [])
})

t.test('the indexer is given the object a write hands over with its encoder, and nothing for a plain encoder', async t => {
  const seen: unknown[] = []
  const s = await open({ indexer: { version: 'spy-1', terms: (key, value, source) => { seen.push(source); return conformanceIndexer.terms(key, value) } } })
  t.teardown(async () => { await s.close() })
  const obj = { a: 1 }
  const bytes = Buffer.from(JSON.stringify(obj))
  const c = await s.create('/k/1', encoderWithSource(() => bytes, obj))
  await s.update('/k/1', encoderWithSource(() => bytes, obj), c.modRevision)
  await s.create('/k/2', () => bytes)
  t.same(seen, [obj, obj, undefined])
  t.equal(seen[0], obj, 'the same object, not a copy')
})
