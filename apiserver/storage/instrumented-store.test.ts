import t from 'tap'
import { resourceOfKey } from './instrumented-store.js'

/** The definition resourceOfKey's scan must agree with. */
function byRegex (key: string): string {
  const [group = '', plural = ''] = key.replace(/^\/+/, '').split('/')
  if (plural === '') return group
  return group === 'core' ? plural : `${plural}.${group}`
}

t.test('resourceOfKey names the resource of a key', async t => {
  t.equal(resourceOfKey('/core/pods/ns/name'), 'pods')
  t.equal(resourceOfKey('/apps/deployments/ns/name'), 'deployments.apps')
  t.equal(resourceOfKey('/core/namespaces/'), 'namespaces')
  t.equal(resourceOfKey(''), '')
})

t.test('resourceOfKey agrees with split-based parsing on every short key of path-ish tokens', async t => {
  const tokens = ['/', 'a', 'core', 'x.y']
  const mismatches: string[] = []
  let checked = 0
  const visit = (s: string, depth: number): void => {
    checked++
    if (resourceOfKey(s) !== byRegex(s)) mismatches.push(s)
    if (depth < 7) for (const tok of tokens) visit(s + tok, depth + 1)
  }
  visit('', 0)
  t.ok(checked > 10_000)
  t.same(mismatches.slice(0, 10), [])
})
