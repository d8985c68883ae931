// The shared storage conformance suite: every Store implementation (LMDB, etcd) runs these tap tests.
import type { Test } from 'tap'
import type { Store } from './store.js'
import { indexTests } from './conformance-index.js'
import { readTests } from './conformance-reads.js'
import { watchTests } from './conformance-watch.js'
import { writeTests } from './conformance-writes.js'

export { collect, enc, type Collector } from './conformance-helpers.js'
export { conformanceIndexer } from './conformance-index.js'

/**
 * Runs the suite as subtests of `t`. `newStore` opens a fresh, empty store; each test closes the store
 * it opened (the factory owns cleaning up its files). A store that keeps an index is opened with `conformanceIndexer`.
 */
export function runStorageConformance (t: Test, newStore: () => Promise<Store>): void {
  t.test('writes', async t => { writeTests(t, newStore) })
  t.test('reads', async t => { readTests(t, newStore) })
  t.test('watch', async t => { watchTests(t, newStore) })
  t.test('indexed lists', async t => { indexTests(t, newStore) })
}
