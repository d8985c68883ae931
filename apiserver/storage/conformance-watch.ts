// Storage conformance, watch: live and replayed events, ordering, no gaps or duplicates, stop, errors.
import type { Test } from 'tap'
import { assertContiguous, brief, codeOf, collect, enc, sleep, str, withStore, type NewStore } from './conformance-helpers.js'
import { isStorageError } from './store.js'

export function watchTests (t: Test, newStore: NewStore): void {
  withStore(t, newStore, 'a watch from the current revision gets later changes under its prefix only', async (t, s, r) => {
    await s.create('w/old', enc('old'))
    const w = collect(s, 'w/', s.currentRevision())
    await s.create('w/1', enc('one'))
    await s.create('wx/1', enc('not mine'))
    await s.create('other/1', enc('not mine'))
    await s.update('w/1', enc('two'))
    await w.upTo(r(5))
    t.same(brief(w.events), [`put w/1 ${r(2)} one@${r(2)}`, `put w/1 ${r(5)} two@${r(5)}`])
    w.handle.stop()
  })

  withStore(t, newStore, 'a watch from the oldest retained revision (0 on a new store) replays every change', async (t, s, r) => {
    await s.create('z/1', enc('a'))
    await s.update('z/1', enc('b'))
    await s.create('z/2', enc('c'))
    await s.delete('z/1')
    const w = collect(s, 'z/', s.compactedRevision())
    await w.upTo(r(4))
    t.same(brief(w.events), [`put z/1 ${r(1)} a@${r(1)}`, `put z/1 ${r(2)} b@${r(2)}`, `put z/2 ${r(3)} c@${r(3)}`, `delete z/1 ${r(4)} b@${r(2)}`])
    w.handle.stop()
  })

  withStore(t, newStore, 'a watch from an older revision replays history, then continues live with no gap or duplicate', async (t, s, r) => {
    for (let i = 1; i <= 10; i++) await s.create(`h/${i}`, enc(`v${i}`))
    const w = collect(s, 'h/', r(4))
    for (let i = 11; i <= 15; i++) await s.create(`h/${i}`, enc(`v${i}`))
    await w.upTo(r(15))
    assertContiguous(t, w.events, r(4), r(15), 'replay then live')
    t.same(w.errors, [])
    w.handle.stop()
  })

  withStore(t, newStore, 'put events carry the previous value on update and none on create', async (t, s, r) => {
    const w = collect(s, 'pv/', r(0))
    await s.create('pv/x', enc('one'))
    await s.update('pv/x', enc('two'))
    await w.upTo(r(2))
    t.equal(w.events[0].prevValue, undefined)
    t.equal(w.events[0].createRevision, r(1))
    t.equal(str(w.events[1].prevValue), `one@${r(1)}`)
    t.equal(w.events[1].createRevision, r(1))
    const replay = collect(s, 'pv/', r(0))
    await replay.upTo(r(2))
    t.equal(str(replay.events[1].prevValue), `one@${r(1)}`, 'replayed events carry it too')
    w.handle.stop()
    replay.handle.stop()
  })

  withStore(t, newStore, 'a delete event carries the last value and the create revision', async (t, s, r) => {
    const w = collect(s, 'del/', r(0))
    await s.create('del/x', enc('one'))
    await s.update('del/x', enc('two'))
    await s.delete('del/x')
    await w.upTo(r(3))
    const d = w.events[2]
    t.same([d.type, d.key, d.revision, d.createRevision, str(d.value)], ['delete', 'del/x', r(3), r(1), `two@${r(2)}`])
    const replay = collect(s, 'del/', r(2))
    await replay.upTo(r(3))
    t.same(brief(replay.events), [`delete del/x ${r(3)} two@${r(2)}`])
    w.handle.stop()
    replay.handle.stop()
  })

  withStore(t, newStore, 'under concurrent writes every event arrives once, in revision order', async (t, s, r) => {
    const w = collect(s, 'cw/', r(0))
    const writes = Array.from({ length: 300 }, (_, i) => s.create(`cw/${i % 30}/${i}`, enc(`${i}`)))
    await Promise.all(writes)
    await w.upTo(r(300))
    assertContiguous(t, w.events, r(0), r(300), 'all writes')
    t.ok(w.batches <= 300, 'delivered in batches')
    w.handle.stop()
  })

  withStore(t, newStore, 'watches started while writes are committing miss nothing and repeat nothing', async (t, s, r) => {
    const watchers: Array<{ from: number, w: ReturnType<typeof collect> }> = []
    const writes: Array<Promise<unknown>> = []
    for (let i = 0; i < 400; i++) {
      writes.push(s.create(`race/${i}`, enc(`${i}`)))
      if (i % 40 === 0) {
        await sleep(1)
        const cur = s.currentRevision()
        for (const from of [cur, Math.max(r(0), cur - 7), r(0)]) watchers.push({ from, w: collect(s, 'race/', from) })
      }
    }
    await Promise.all(writes)
    for (const { from, w } of watchers) {
      await w.upTo(r(400))
      assertContiguous(t, w.events, from, r(400), `watch from ${from}`)
      w.handle.stop()
    }
  })

  withStore(t, newStore, 'many watchers of one prefix each get the whole stream', async (t, s, r) => {
    const ws = Array.from({ length: 50 }, () => collect(s, 'fan/', r(0)))
    await Promise.all(Array.from({ length: 40 }, (_, i) => s.create(`fan/${i}`, enc(`${i}`))))
    for (const w of ws) {
      await w.upTo(r(40))
      t.equal(w.events.length, 40)
      w.handle.stop()
    }
  })

  withStore(t, newStore, 'failed writes produce no events', async (t, s, r) => {
    const w = collect(s, 'fw/', r(0))
    await s.create('fw/x', enc('one'))
    await codeOf(s.create('fw/x', enc('dup')))
    await codeOf(s.update('fw/x', enc('stale'), r(99)))
    await codeOf(s.delete('fw/none'))
    await s.update('fw/x', enc('two'))
    await w.upTo(r(2))
    t.same(brief(w.events), [`put fw/x ${r(1)} one@${r(1)}`, `put fw/x ${r(2)} two@${r(2)}`])
    w.handle.stop()
  })

  withStore(t, newStore, 'no callback runs after stop(), even when stopping from inside a callback', async (t, s, r) => {
    let after = 0
    let stopped = false
    const h = s.watch('st/', r(0), {
      onEvents () { if (stopped) after++; else { stopped = true; h.stop() } },
      onError () { after++ }
    })
    const early = collect(s, 'st/', r(0))
    early.handle.stop()
    early.handle.stop()
    for (let i = 0; i < 20; i++) await s.create(`st/${i}`, enc(`${i}`))
    const replaying = s.watch('st/', r(0), { onEvents () { after++ }, onError () { after++ } })
    replaying.stop()
    await sleep(30)
    t.equal(after, 0)
    t.same(early.events, [])
    t.ok(stopped, 'the first watch got one batch')
  })

  withStore(t, newStore, 'a watch from a compacted revision fails with Compacted', async (t, s, r) => {
    for (let i = 1; i <= 6; i++) await s.create(`cp/${i}`, enc(`${i}`))
    await s.compact(r(4))
    const w = collect(s, 'cp/', r(2))
    await w.until(() => w.errors.length > 0)
    t.ok(isStorageError(w.errors[0], 'Compacted'))
    t.same(w.events, [])
    const ok = collect(s, 'cp/', r(4))
    await ok.upTo(r(6))
    t.same(ok.events.map(e => e.revision), [r(5), r(6)], 'from the compacted revision itself works')
    ok.handle.stop()
  })

  t.test('close() ends watches with StoreClosed and refuses later writes', async t => {
    const s = await newStore()
    const kv = await s.create('cl/1', enc('x'))
    const w = collect(s, 'cl/', kv.modRevision)
    const pending = s.create('cl/2', enc('y'))
    await s.close()
    t.equal(await codeOf(pending), 'resolved', 'a write pending at close settles')
    await w.until(() => w.errors.length > 0)
    t.ok(isStorageError(w.errors[0], 'StoreClosed'))
    t.equal(await codeOf(s.create('cl/3', enc('z'))), 'StoreClosed')
    await s.close()
  })
}
