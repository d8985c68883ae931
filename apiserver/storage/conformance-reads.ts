// Storage conformance, reads: prefix lists, paging, snapshots at older revisions, compaction, counts.
import type { Test } from 'tap'
import { codeOf, enc, str, withStore, type NewStore } from './conformance-helpers.js'
import { isStorageError, type KeyValue, type Store } from './store.js'

const keys = (items: KeyValue[]): string[] => items.map(i => i.key)
const values = (items: KeyValue[]): string[] => items.map(i => `${i.key}=${str(i.value)}`)

async function seed (s: Store, ks: string[]): Promise<void> {
  for (const k of ks) await s.create(k, enc(k))
}

export function readTests (t: Test, newStore: NewStore): void {
  withStore(t, newStore, 'list returns only keys under the prefix ("a/" is not "ab/")', async (t, s) => {
    await seed(s, ['a', 'a/1', 'a/2', 'ab/1', 'a0', 'b/1', 'a/sub/1'])
    t.same(keys((await s.list('a/')).items), ['a/1', 'a/2', 'a/sub/1'])
    t.same(keys((await s.list('ab/')).items), ['ab/1'])
    t.same(keys((await s.list('a/sub/')).items), ['a/sub/1'])
    t.same(keys((await s.list('c/')).items), [])
    t.equal(await s.count('a/'), 3)
    t.equal(await s.count('ab/'), 1)
  })

  withStore(t, newStore, 'list is in key byte order and carries revisions', async (t, s, r) => {
    await seed(s, ['k/b', 'k/a', 'k/c', 'k/B', 'k/a-1', 'k/a/1'])
    await s.update('k/a', enc('k/a2'))
    const res = await s.list('k/')
    t.same(keys(res.items), ['k/B', 'k/a', 'k/a-1', 'k/a/1', 'k/b', 'k/c'])
    const a = res.items.find(i => i.key === 'k/a')!
    t.same([a.createRevision, a.modRevision, str(a.value)], [r(2), r(7), `k/a2@${r(7)}`])
    t.equal(res.revision, r(7), 'reports the revision it read at')
    t.equal(res.remaining, 0)
  })

  withStore(t, newStore, 'the empty prefix lists every key', async (t, s) => {
    await seed(s, ['x/1', 'a/1', 'm'])
    t.same(keys((await s.list('')).items), ['a/1', 'm', 'x/1'])
    t.equal(await s.count(''), 3)
  })

  withStore(t, newStore, 'a limited list returns a page and counts the keys after it', async (t, s) => {
    await seed(s, ['p/1', 'p/2', 'p/3', 'p/4', 'p/5', 'q/1'])
    const page = await s.list('p/', { limit: 2 })
    t.same(keys(page.items), ['p/1', 'p/2'])
    t.equal(page.remaining, 3)
    const all = await s.list('p/', { limit: 5 })
    t.equal(all.items.length, 5)
    t.equal(all.remaining, 0)
    const unlimited = await s.list('p/', { limit: 0 })
    t.equal(unlimited.items.length, 5)
  })

  withStore(t, newStore, 'paging with startKey and limit walks every key once at one revision', async (t, s) => {
    await seed(s, Array.from({ length: 23 }, (_, i) => `pg/${String(i).padStart(2, '0')}`))
    const first = await s.list('pg/', { limit: 5 })
    const seen = keys(first.items)
    let last = first
    while (last.remaining > 0) {
      await s.create(`pg/zz-${seen.length}`, enc('late')) // later writes must not show up in the pages
      const startKey = last.items[last.items.length - 1].key + '\0'
      last = await s.list('pg/', { revision: first.revision, startKey, limit: 5 })
      t.equal(last.revision, first.revision)
      seen.push(...keys(last.items))
    }
    t.same(seen, Array.from({ length: 23 }, (_, i) => `pg/${String(i).padStart(2, '0')}`))
  })

  withStore(t, newStore, 'startKey is inclusive and applies within the prefix', async (t, s) => {
    await seed(s, ['s/a', 's/b', 's/c'])
    t.same(keys((await s.list('s/', { startKey: 's/b' })).items), ['s/b', 's/c'])
    t.same(keys((await s.list('s/', { startKey: 's/bb' })).items), ['s/c'])
    t.same(keys((await s.list('s/', { startKey: 'a' })).items), ['s/a', 's/b', 's/c'], 'a startKey before the prefix starts at the prefix')
    t.same(keys((await s.list('s/', { startKey: 't' })).items), [], 'a startKey after the prefix finds nothing')
  })

  withStore(t, newStore, 'a list at an older revision is that snapshot, untouched by later writes', async (t, s, r) => {
    await seed(s, ['o/1', 'o/2', 'o/3'])
    const at = s.currentRevision()
    await s.update('o/1', enc('o/1 changed'))
    await s.delete('o/2')
    await s.create('o/4', enc('o/4'))
    await s.delete('o/3')
    await s.create('o/3', enc('o/3 again'))
    const old = await s.list('o/', { revision: at })
    t.equal(old.revision, at)
    t.same(values(old.items), [`o/1=o/1@${r(1)}`, `o/2=o/2@${r(2)}`, `o/3=o/3@${r(3)}`])
    t.same(old.items.map(i => [i.createRevision, i.modRevision]), [[r(1), r(1)], [r(2), r(2)], [r(3), r(3)]])
    t.same(values((await s.list('o/')).items), [`o/1=o/1 changed@${r(4)}`, `o/3=o/3 again@${r(8)}`, `o/4=o/4@${r(6)}`])
    t.same(keys((await s.list('o/', { revision: r(5) })).items), ['o/1', 'o/3'])
  })

  withStore(t, newStore, 'paging at an older revision counts remaining at that revision', async (t, s) => {
    await seed(s, ['r/1', 'r/2', 'r/3', 'r/4'])
    const at = s.currentRevision()
    await s.delete('r/3')
    await s.create('r/5', enc('r/5'))
    const page = await s.list('r/', { revision: at, limit: 2 })
    t.same(keys(page.items), ['r/1', 'r/2'])
    t.equal(page.remaining, 2)
    const rest = await s.list('r/', { revision: at, startKey: 'r/3', limit: 2 })
    t.same(keys(rest.items), ['r/3', 'r/4'])
    t.equal(rest.remaining, 0)
  })

  withStore(t, newStore, 'noCount pages say whether keys follow, at the current and at an older revision', async (t, s) => {
    await seed(s, ['n/1', 'n/2', 'n/3', 'n/4', 'n/5', 'o/1'])
    const at = s.currentRevision()
    for (const revision of [undefined, at]) {
      const page = await s.list('n/', { revision, limit: 2, noCount: true })
      t.same(keys(page.items), ['n/1', 'n/2'])
      t.ok(page.remaining >= 1 && page.remaining <= 3, `keys follow the page (revision ${String(revision)})`)
      const last = await s.list('n/', { revision, startKey: 'n/4', limit: 2, noCount: true })
      t.same(keys(last.items), ['n/4', 'n/5'])
      t.equal(last.remaining, 0, 'none follow the last page')
      if (revision === undefined) await s.delete('n/5') // the next pass reads `at` from history
    }
    const gone = await s.list('n/', { revision: at, startKey: 'n/3', limit: 2, noCount: true })
    t.same(keys(gone.items), ['n/3', 'n/4'])
    t.ok(gone.remaining >= 1, 'n/5 still follows at the older revision')
  })

  withStore(t, newStore, 'listJoined reads what noCount pages read, the values joined by the separator', async (t, s) => {
    if (s.listJoined === undefined) { t.pass('the store has no listJoined'); return }
    await seed(s, ['j/1', 'j/2', 'j/3', 'j/4', 'j/5', 'k/1'])
    const at = s.currentRevision()
    const sep = Buffer.from('|')
    const joined = async (prefix: string, opts: Parameters<Store['list']>[1]): Promise<void> => {
      const want = await s.list(prefix, { ...opts, noCount: true })
      const got = await s.listJoined!(prefix, opts ?? {}, sep)
      t.equal(str(got.bytes), want.items.map(i => str(i.value)).join('|'), `${prefix} ${JSON.stringify(opts)}`)
      t.same([got.count, got.lastKey, got.revision, got.remaining > 0], [want.items.length, want.items[want.items.length - 1]?.key, want.revision, want.remaining > 0])
    }
    await joined('j/', {})
    await joined('j/', { limit: 2 })
    await joined('j/', { limit: 2, startKey: 'j/4' })
    await joined('j/', { limit: 5 })
    await joined('', { limit: 3 })
    await joined('', {})
    await joined('nothing/', {})
    await s.delete('j/2')
    await s.update('j/3', enc('j/3 changed'))
    await joined('j/', { revision: at, limit: 3 })
    await joined('j/', { limit: 3 })
  })

  withStore(t, newStore, 'listJoined pages hold values of any size', async (t, s) => {
    if (s.listJoined === undefined) { t.pass('the store has no listJoined'); return }
    const big = (c: string): string => c.repeat(700 * 1024)
    for (const c of ['a', 'b', 'c']) await s.create(`big/${c}`, enc(big(c)))
    const got = await s.listJoined('big/', {}, Buffer.from(','))
    t.equal(got.count, 3)
    t.equal(str(got.bytes), (await s.list('big/')).items.map(i => str(i.value)).join(','))
  })

  withStore(t, newStore, 'get at an older revision returns the version of that time', async (t, s, r) => {
    await s.create('g/x', enc('one')) // 1
    await s.update('g/x', enc('two')) // 2
    await s.create('g/y', enc('y')) // 3
    await s.delete('g/x') // 4
    await s.create('g/x', enc('three')) // 5
    t.equal(await s.get('g/x', { revision: r(0) }), undefined)
    const at = async (n: number): Promise<string | undefined> => str((await s.get('g/x', { revision: r(n) }))?.value)
    t.same([await at(1), await at(2), await at(3), await at(4), await at(5)],
      [`one@${r(1)}`, `two@${r(2)}`, `two@${r(2)}`, undefined, `three@${r(5)}`])
    t.equal(await s.get('g/y', { revision: r(2) }), undefined, 'absent before its create')
    const v = await s.get('g/x', { revision: r(3) })
    t.same([v?.createRevision, v?.modRevision], [r(1), r(2)])
  })

  withStore(t, newStore, 'reading a revision newer than the current one fails with FutureRevision', async (t, s, r) => {
    await seed(s, ['f/1'])
    const err = await s.list('f/', { revision: r(5) }).catch(e => e)
    t.ok(isStorageError(err, 'FutureRevision'))
    t.equal(err.revision, r(1), 'carries the current revision')
    t.equal(await codeOf(s.get('f/1', { revision: r(2) })), 'FutureRevision')
    t.equal(await codeOf(s.list('f/', { revision: r(1) })), 'resolved')
  })

  withStore(t, newStore, 'compaction makes older reads fail with Compacted and keeps live data', async (t, s, r) => {
    await seed(s, ['c/1', 'c/2', 'c/3']) // 1..3
    await s.update('c/1', enc('c/1 v2')) // 4
    await s.delete('c/2') // 5
    await s.update('c/1', enc('c/1 v3')) // 6
    await s.compact(r(5))
    t.equal(s.compactedRevision(), r(5))
    const err = await s.list('c/', { revision: r(4) }).catch(e => e)
    t.ok(isStorageError(err, 'Compacted'), 'list before the compaction: Compacted')
    t.equal(err.revision, r(5))
    t.equal(await codeOf(s.get('c/1', { revision: r(1) })), 'Compacted')
    t.same(values((await s.list('c/', { revision: r(5) })).items), [`c/1=c/1 v2@${r(4)}`, `c/3=c/3@${r(3)}`], 'the compacted revision itself is readable')
    t.same(values((await s.list('c/')).items), [`c/1=c/1 v3@${r(6)}`, `c/3=c/3@${r(3)}`])
    t.equal(str((await s.get('c/1', { revision: r(5) }))?.value), `c/1 v2@${r(4)}`)
    t.equal(await s.get('c/2', { revision: r(5) }), undefined)
  })

  withStore(t, newStore, 'compacting to an older revision than the last compaction changes nothing', async (t, s, r) => {
    await seed(s, ['d/1', 'd/2', 'd/3'])
    await s.compact(r(2))
    await s.compact(r(1))
    t.equal(s.compactedRevision(), r(2))
    t.equal((await s.list('d/', { revision: r(2) })).items.length, 2)
  })

  withStore(t, newStore, 'reads between the compacted and the current revision survive compaction', async (t, s, r) => {
    await seed(s, ['e/1', 'e/2']) // 1, 2
    await s.update('e/1', enc('e/1 v2')) // 3
    await s.compact(r(3))
    await s.update('e/1', enc('e/1 v3')) // 4
    await s.delete('e/2') // 5
    await s.update('e/1', enc('e/1 v4')) // 6
    await s.compact(r(4))
    t.same(values((await s.list('e/', { revision: r(4) })).items), [`e/1=e/1 v3@${r(4)}`, `e/2=e/2@${r(2)}`])
    t.same(values((await s.list('e/', { revision: r(5) })).items), [`e/1=e/1 v3@${r(4)}`])
    t.equal(str((await s.get('e/2', { revision: r(4) }))?.value), `e/2@${r(2)}`)
  })
}
