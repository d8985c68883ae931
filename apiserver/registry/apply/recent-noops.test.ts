// The bounded memory of no-op applies.
import t from 'tap'
import { RecentNoopApplies } from './recent-noops.js'

t.test('a no-op is remembered per object revision, manager, subresource and force', async t => {
  const r = new RecentNoopApplies()
  const d = RecentNoopApplies.digest({ a: 1 })
  r.remember('k', 5, 'm', '', false, d)
  t.ok(r.has('k', 5, 'm', '', false, () => d))
  t.notOk(r.has('k', 6, 'm', '', false, () => d), 'another revision')
  t.notOk(r.has('k', 5, 'other', '', false, () => d), 'another manager')
  t.notOk(r.has('k', 5, 'm', 'status', false, () => d), 'another subresource')
  t.notOk(r.has('k', 5, 'm', '', true, () => d), 'forced')
  t.notOk(r.has('k', 5, 'm', '', false, () => RecentNoopApplies.digest({ a: 2 })), 'another configuration')
})

t.test('the least recently used entry leaves first when full', async t => {
  const r = new RecentNoopApplies(2)
  const d = RecentNoopApplies.digest({})
  r.remember('a', 1, 'm', '', false, d)
  r.remember('b', 1, 'm', '', false, d)
  t.ok(r.has('a', 1, 'm', '', false, () => d), 'a used, so b is now the oldest')
  r.remember('c', 1, 'm', '', false, d)
  t.equal(r.size, 2)
  t.ok(r.has('a', 1, 'm', '', false, () => d))
  t.notOk(r.has('b', 1, 'm', '', false, () => d))
  t.ok(r.has('c', 1, 'm', '', false, () => d))
})
