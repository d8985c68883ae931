// Storage conformance, indexed lists: ListOptions.index narrows what a store returns, never what a caller selects.
import type { Test } from 'tap'
import { enc, str, withStore, type NewStore } from './conformance-helpers.js'
import type { KeyValue, ListOptions, Store, StoreIndexer } from './store.js'

/**
 * The terms the suite's stores index by: a value `tags:a,b@<rev>` has terms `t:a` and `t:b`. A factory that keeps an
 * index opens its stores with this indexer.
 */
export const conformanceIndexer: StoreIndexer = {
  version: 'conformance-1',
  terms (_key, value) {
    const m = /^tags:([^@]*)@/.exec(value.toString())
    return m === null || m[1] === '' ? [] : m[1].split(',').map(tag => `t:${tag}`)
  }
}

const tagsOf = (kv: KeyValue): string[] => conformanceIndexer.terms(kv.key, kv.value)
const has = (terms: string[]) => (kv: KeyValue): boolean => tagsOf(kv).some(t => terms.includes(t))
const shown = (items: KeyValue[]): string[] => items.map(kv => `${kv.key}=${str(kv.value)}`)

/** Every page of a walk with `opts`, filtered by `keep`, as one list. */
async function walk (s: Store, prefix: string, opts: ListOptions, keep: (kv: KeyValue) => boolean): Promise<KeyValue[]> {
  const out: KeyValue[] = []
  let startKey: string | undefined
  for (;;) {
    const page = await s.list(prefix, { ...opts, startKey })
    out.push(...page.items.filter(keep))
    if (page.remaining === 0 || page.items.length === 0) return out
    startKey = page.items[page.items.length - 1].key + '\0'
  }
}

const QUERIES = [['t:a'], ['t:b'], ['t:c'], ['t:none'], ['t:a', 't:c']]

async function seed (s: Store): Promise<void> {
  for (let i = 0; i < 24; i++) {
    const tags = [i % 2 === 0 ? 'a' : 'b', ...(i % 3 === 0 ? ['c'] : [])]
    await s.create(`ix/${String(i).padStart(2, '0')}`, enc(`tags:${tags.join(',')}`))
  }
  await s.create('ixa/0', enc('tags:a')) // beside the prefix: never listed under it
  await s.create('ix0', enc('tags:a'))
}

async function churn (s: Store): Promise<void> {
  for (let i = 0; i < 24; i += 4) await s.update(`ix/${String(i).padStart(2, '0')}`, enc('tags:b'))
  for (let i = 1; i < 24; i += 5) await s.update(`ix/${String(i).padStart(2, '0')}`, enc('tags:a,c'))
  for (let i = 2; i < 24; i += 7) await s.delete(`ix/${String(i).padStart(2, '0')}`)
  await s.update('ix/03', enc('untagged'))
}

export function indexTests (t: Test, newStore: NewStore): void {
  withStore(t, newStore, 'indexed lists select what scans select, after creates, updates and deletes', async (t, s) => {
    await seed(s)
    const check = async (when: string): Promise<void> => {
      for (const terms of QUERIES) {
        const want = shown((await s.list('ix/')).items.filter(has(terms)))
        t.same(shown((await s.list('ix/', { index: terms })).items.filter(has(terms))), want, `${when}: ${terms.join('|')}`)
      }
    }
    await check('after creates')
    await churn(s)
    await check('after updates and deletes')
    t.ok((await s.list('ix/')).items.filter(has(['t:a'])).length > 3, 'the queries select something')
  })

  withStore(t, newStore, 'indexed lists page like scans (counted or not, in one namespace or all)', async (t, s) => {
    await seed(s)
    await churn(s)
    for (const terms of QUERIES) {
      const want = shown((await s.list('ix/')).items.filter(has(terms)))
      for (const limit of [1, 2, 5]) {
        t.same(shown(await walk(s, 'ix/', { index: terms, limit }, has(terms))), want, `${terms.join('|')}, pages of ${limit}`)
        t.same(shown(await walk(s, 'ix/', { index: terms, limit, noCount: true }, has(terms))), want, `${terms.join('|')}, pages of ${limit}, not counted`)
      }
      const sub = shown((await s.list('ix/1')).items.filter(has(terms)))
      t.same(shown(await walk(s, 'ix/1', { index: terms, limit: 2 }, has(terms))), sub, `${terms.join('|')} under a longer prefix`)
    }
  })

  withStore(t, newStore, 'indexed lists at an older revision select that snapshot', async (t, s) => {
    await seed(s)
    const before = s.currentRevision()
    const want = shown((await s.list('ix/', { revision: before })).items.filter(has(['t:a'])))
    await churn(s)
    t.same(shown((await s.list('ix/', { revision: before, index: ['t:a'] })).items.filter(has(['t:a']))), want, 'the old snapshot, filtered')
    t.same(shown(await walk(s, 'ix/', { revision: before, index: ['t:a'], limit: 3 }, has(['t:a']))), want, 'paged at the old revision')
    t.not(shown((await s.list('ix/', { index: ['t:a'] })).items.filter(has(['t:a']))), want, 'the current state differs')
  })
}
