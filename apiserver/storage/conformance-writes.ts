// Storage conformance, writes: create, get, conditional update and delete, revisions, atomicity.
import type { Test } from 'tap'
import { codeOf, enc, str, withStore, type NewStore } from './conformance-helpers.js'
import { PENDING_REVISION, isStorageError } from './store.js'

export function writeTests (t: Test, newStore: NewStore): void {
  withStore(t, newStore, 'a new store has no keys', async (t, s) => {
    t.ok(s.currentRevision() >= 0)
    t.equal(await s.get('a/x'), undefined)
    t.same((await s.list('')).items, [])
    t.equal(await s.count(''), 0)
  })

  withStore(t, newStore, 'create stores the encoder bytes at the next revision and get returns them', async (t, s, r) => {
    const kv = await s.create('a/x', enc('one'))
    t.equal(kv.modRevision, r(1))
    t.equal(kv.createRevision, r(1))
    t.equal(str(kv.value), `one@${r(1)}`)
    t.equal(s.currentRevision(), r(1))
    const got = await s.get('a/x')
    t.same({ ...got, value: str(got?.value) }, { key: 'a/x', value: `one@${r(1)}`, createRevision: r(1), modRevision: r(1) })
  })

  withStore(t, newStore, 'create of a live key fails with KeyExists and changes nothing', async (t, s, r) => {
    await s.create('a/x', enc('one'))
    const err = await s.create('a/x', enc('two')).catch(e => e)
    t.ok(isStorageError(err, 'KeyExists'), 'KeyExists')
    t.equal(err.key, 'a/x')
    t.equal(str((await s.get('a/x'))?.value), `one@${r(1)}`)
    t.equal(s.currentRevision(), r(1), 'no revision consumed')
  })

  withStore(t, newStore, 'one global revision counter increases by one per write across keys', async (t, s, r) => {
    const a = await s.create('a/1', enc('a'))
    const b = await s.create('b/1', enc('b'))
    const c = await s.update('a/1', enc('a2'))
    const d = await s.delete('b/1')
    t.same([a.modRevision, b.modRevision, c.modRevision, d.modRevision], [r(1), r(2), r(3), r(4)])
    t.equal(s.currentRevision(), r(4))
  })

  withStore(t, newStore, 'the encoder is called once, with the revision the write commits at (or the pending one); the bytes carry the revision', async (t, s, r) => {
    await s.create('a/0', enc('x'))
    const seen: number[] = []
    const kv = await s.create('a/1', rev => { seen.push(rev); return Buffer.from(`{"resourceVersion":"${rev}"}`) })
    t.equal(seen.length, 1)
    t.ok(seen[0] === r(2) || seen[0] === PENDING_REVISION, `called with ${seen[0]}`)
    t.equal(kv.modRevision, r(2))
    t.equal(str(kv.value), `{"resourceVersion":"${r(2)}"}`, 'the written KeyValue')
    t.equal(str((await s.get('a/1'))?.value), `{"resourceVersion":"${r(2)}"}`)
  })

  withStore(t, newStore, 'values are stored as exact bytes', async (t, s) => {
    const bytes = Buffer.from([0, 255, 1, 0, 128, 10, 13, 0])
    await s.create('bin/x', () => bytes)
    t.same([...(await s.get('bin/x'))!.value], [...bytes])
    await s.create('bin/empty', () => Buffer.alloc(0))
    t.equal((await s.get('bin/empty'))!.value.length, 0)
    const big = Buffer.alloc(256 * 1024, 7)
    await s.create('bin/big', () => big)
    t.ok((await s.get('bin/big'))!.value.equals(big))
  })

  withStore(t, newStore, 'update replaces the value, keeps createRevision and moves modRevision', async (t, s, r) => {
    await s.create('a/x', enc('one'))
    await s.create('a/y', enc('other'))
    const kv = await s.update('a/x', enc('two'))
    t.same({ ...kv, value: str(kv.value) }, { key: 'a/x', value: `two@${r(3)}`, createRevision: r(1), modRevision: r(3) })
    t.equal(str((await s.get('a/x'))?.value), `two@${r(3)}`)
  })

  withStore(t, newStore, 'update with the live modRevision succeeds and with a stale one fails with Conflict', async (t, s, r) => {
    const v1 = await s.create('a/x', enc('one'))
    const v2 = await s.update('a/x', enc('two'), v1.modRevision)
    t.equal(v2.modRevision, r(2))
    const err = await s.update('a/x', enc('three'), v1.modRevision).catch(e => e)
    t.ok(isStorageError(err, 'Conflict'), 'Conflict')
    t.equal(err.revision, r(2), 'carries the live modRevision')
    t.equal(str((await s.get('a/x'))?.value), `two@${r(2)}`)
    t.equal(s.currentRevision(), r(2))
  })

  withStore(t, newStore, 'update and delete of a missing key fail with NotFound', async (t, s, r) => {
    t.equal(await codeOf(s.update('a/none', enc('x'))), 'NotFound')
    t.equal(await codeOf(s.delete('a/none')), 'NotFound')
    t.equal(s.currentRevision(), r(0))
  })

  withStore(t, newStore, 'delete returns the last value at the delete revision and removes the key', async (t, s, r) => {
    await s.create('a/x', enc('one'))
    await s.update('a/x', enc('two'))
    const kv = await s.delete('a/x', r(2))
    t.same({ ...kv, value: str(kv.value) }, { key: 'a/x', value: `two@${r(2)}`, createRevision: r(1), modRevision: r(3) })
    t.equal(await s.get('a/x'), undefined)
    t.equal(await s.count('a/'), 0)
  })

  withStore(t, newStore, 'delete with a stale modRevision fails with Conflict and keeps the key', async (t, s, r) => {
    await s.create('a/x', enc('one'))
    await s.update('a/x', enc('two'))
    const err = await s.delete('a/x', r(1)).catch(e => e)
    t.ok(isStorageError(err, 'Conflict'))
    t.equal(err.revision, r(2))
    t.equal(str((await s.get('a/x'))?.value), `two@${r(2)}`)
  })

  withStore(t, newStore, 'a key created again after a delete is a new incarnation', async (t, s, r) => {
    await s.create('a/x', enc('one'))
    await s.delete('a/x')
    const kv = await s.create('a/x', enc('again'))
    t.equal(kv.createRevision, r(3))
    t.equal(kv.modRevision, r(3))
  })

  withStore(t, newStore, 'concurrent creates of one key: exactly one wins', async (t, s, r) => {
    const results = await Promise.allSettled(Array.from({ length: 20 }, (_, i) => s.create('a/x', enc(`w${i}`))))
    const won = results.filter(res => res.status === 'fulfilled')
    t.equal(won.length, 1, 'one winner')
    t.ok(results.every(res => res.status === 'fulfilled' || isStorageError(res.reason, 'KeyExists')), 'the rest KeyExists')
    const winner = (won[0] as PromiseFulfilledResult<{ value: Buffer }>).value
    t.equal(str((await s.get('a/x'))?.value), str(winner.value))
    t.equal(s.currentRevision(), r(1))
  })

  withStore(t, newStore, 'concurrent conditional updates from one revision: exactly one wins', async (t, s) => {
    const base = await s.create('a/x', enc('base'))
    const results = await Promise.allSettled(Array.from({ length: 10 }, (_, i) => s.update('a/x', enc(`u${i}`), base.modRevision)))
    t.equal(results.filter(res => res.status === 'fulfilled').length, 1)
    t.equal(results.filter(res => res.status === 'rejected' && isStorageError(res.reason, 'Conflict')).length, 9)
  })

  withStore(t, newStore, 'concurrent writes each get their own revision, with no gaps', async (t, s, r) => {
    const kvs = await Promise.all(Array.from({ length: 200 }, (_, i) => s.create(`c/${String(i).padStart(3, '0')}`, enc(`v${i}`))))
    t.same(kvs.map(kv => kv.modRevision).sort((a, b) => a - b), Array.from({ length: 200 }, (_, i) => r(i + 1)))
    t.ok(kvs.every((kv, i) => str(kv.value) === `v${i}@${kv.modRevision}`), 'each value carries its revision')
    t.equal(s.currentRevision(), r(200))
    t.equal(await s.count('c/'), 200)
  })

  withStore(t, newStore, 'a write is visible to reads once it resolves', async (t, s) => {
    for (let i = 0; i < 20; i++) {
      const kv = await s.create(`v/${i}`, enc(`${i}`))
      t.equal((await s.get(`v/${i}`))?.modRevision, kv.modRevision)
      t.ok(s.currentRevision() >= kv.modRevision)
      t.equal((await s.list('v/')).items.length, i + 1)
    }
  })
}
