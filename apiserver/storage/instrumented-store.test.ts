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

t.test('the timed store passes answers and failures through and observes every call once', async t => {
  const { instrumentStore } = await import('./instrumented-store.js')
  const seen: Array<[string, string]> = []
  const inner = {
    get: async (key: string) => key === '/core/pods/ns/gone' ? undefined : { key, value: Buffer.from('{}'), modRevision: 2, createRevision: 1, version: 1 },
    list: async () => { throw new Error('list failed') },
    count: (() => { throw new Error('thrown before any promise') }) as unknown as () => Promise<number>
  }
  const store = instrumentStore(inner as unknown as Parameters<typeof instrumentStore>[0], (op, type, seconds) => {
    t.ok(seconds >= 0)
    seen.push([op, type])
  })
  t.equal((await store.get('/core/pods/ns/a'))?.modRevision, 2)
  t.equal(await store.get('/core/pods/ns/gone'), undefined)
  await t.rejects(store.list('/apps/deployments/'), { message: 'list failed' })
  const counted = store.count('/core/configmaps/')
  t.ok(counted instanceof Promise, 'a synchronous throw becomes a rejected promise')
  await t.rejects(counted, { message: 'thrown before any promise' })
  t.same(seen, [['get', 'pods'], ['get', 'pods'], ['list', 'deployments.apps'], ['count', 'configmaps']])
})
