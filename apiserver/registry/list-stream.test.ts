// Streamed LIST: chunks read on demand from one snapshot, the same items as a plain list, storage errors as Status.
import t from 'tap'
import { body, ctx, openFixture, type Fixture } from './testing.js'
import type { GenericStore } from './generic-store.js'
import { isStatusError } from '../errors/status-error.js'
import { streamList } from './list-stream.js'
import { namespacePrefix } from './keys.js'
import { compileSelector } from './selectors.js'

let fx: Fixture
let cms: GenericStore
t.before(async () => {
  fx = await openFixture()
  cms = fx.registry.handler('', 'v1', 'configmaps') as GenericStore
  for (let i = 0; i < 10; i++) await cms.create(ctx(), 'default', body({ metadata: { name: `cm-${i}`, labels: { mod3: String(i % 3) } }, data: {} }))
  await cms.create(ctx(), 'orch-system', body({ metadata: { name: 'elsewhere' } }))
})
t.teardown(async () => { await fx.close() })

const names = (items: Buffer[]): string[] => items.map(b => JSON.parse(b.toString()).metadata.name)

const NL = Buffer.from('\n') // compact JSON holds no raw newline: a separator the test can split on

const split = (joined: Buffer | undefined): Buffer[] => joined === undefined || joined.length === 0 ? [] : joined.toString().split('\n').map(x => Buffer.from(x))

/** The items of each streamed chunk. */
async function collect (rest: AsyncIterable<Buffer> | undefined): Promise<Buffer[][]> {
  const chunks: Buffer[][] = []
  if (rest !== undefined) for await (const c of rest) chunks.push(split(c))
  return chunks
}

t.test('chunks come from the snapshot of the first, as the iteration asks for them', async t => {
  const prefix = namespacePrefix(cms.definition, 'default')
  const list = await streamList(cms.core, prefix, {}, NL, 3)
  t.equal(list.resourceVersion, String(fx.store.currentRevision()))
  t.same(list.items, [], 'the first chunk comes joined')
  t.same(names(split(list.joined)), ['cm-0', 'cm-1', 'cm-2'])
  await cms.create(ctx(), 'default', body({ metadata: { name: 'cm-99' } })) // after the snapshot: not in the stream
  await cms.delete(ctx(), 'default', 'cm-5', {})
  const chunks = await collect(list.rest)
  t.same(chunks.map(c => c.length), [3, 3, 1])
  t.same(names([...split(list.joined), ...chunks.flat()]), ['cm-0', 'cm-1', 'cm-2', 'cm-3', 'cm-4', 'cm-5', 'cm-6', 'cm-7', 'cm-8', 'cm-9'])
  await cms.delete(ctx(), 'default', 'cm-99', {})
  await cms.create(ctx(), 'default', body({ metadata: { name: 'cm-5', labels: { mod3: '2' } }, data: {} }))
})

t.test('a list that fits its first chunk has no rest; the handler streams only when asked to', async t => {
  const small = await streamList(cms.core, namespacePrefix(cms.definition, 'orch-system'), {}, NL, 3)
  t.same(names(split(small.joined)), ['elsewhere'])
  t.equal(small.rest, undefined)
  const plain = await cms.list(ctx(), 'default', {})
  t.equal(plain.rest, undefined)
  t.equal(plain.items.length, 10)
  const streamed = await cms.list(ctx(), 'default', { stream: { separator: NL } })
  t.same(names([...split(streamed.joined), ...(await collect(streamed.rest)).flat()]), names(plain.items))
})

t.test('a snapshot compacted away during the stream ends it with a 410 Status', async t => {
  const list = await streamList(cms.core, namespacePrefix(cms.definition, 'default'), {}, NL, 4)
  await cms.create(ctx(), 'default', body({ metadata: { name: 'later' } }))
  await fx.store.compact(fx.store.currentRevision())
  const err = await collect(list.rest).catch(e => e)
  t.ok(isStatusError(err), 'a StatusError')
  t.equal(err.code, 410)
  await cms.delete(ctx(), 'default', 'later', {})
})

t.test('joined pages of a limited list carry the tokens and counts plain pages do', async t => {
  const plain: string[] = []
  const joined: string[] = []
  let a = await cms.list(ctx(), 'default', { limit: 4 })
  let b = await cms.list(ctx(), 'default', { limit: 4, stream: { separator: NL } })
  for (;;) {
    t.same(b.items, [])
    t.same([b.remainingItemCount, b.resourceVersion, b.continue === ''], [a.remainingItemCount, a.resourceVersion, a.continue === ''])
    plain.push(...names(a.items))
    joined.push(...names(split(b.joined)))
    if (a.continue === '') break
    await cms.create(ctx(), 'default', body({ metadata: { name: `cm-late-${plain.length}` } })) // not in either snapshot
    a = await cms.list(ctx(), 'default', { limit: 4, continue: a.continue })
    b = await cms.list(ctx(), 'default', { limit: 4, continue: b.continue, stream: { separator: NL } })
  }
  t.same(joined, plain)
  t.equal(joined.length, 10)
  for (const n of [4, 8]) await cms.delete(ctx(), 'default', `cm-late-${n}`, {})
})

t.test('a selected stream joins only the matching items of each chunk, chunks without a match leave no trace', async t => {
  const prefix = namespacePrefix(cms.definition, 'default')
  const zero = await streamList(cms.core, prefix, {}, NL, 2, compileSelector('mod3=0', undefined, cms.core.fields))
  const chunks = await collect(zero.rest)
  t.same(names([...split(zero.joined), ...chunks.flat()]), ['cm-0', 'cm-3', 'cm-6', 'cm-9'])
  t.equal(zero.resourceVersion, String(fx.store.currentRevision()))
  const none = await streamList(cms.core, prefix, {}, NL, 2, compileSelector('mod3=7', undefined, cms.core.fields))
  t.same([split(none.joined), await collect(none.rest)], [[], []])
  const viaHandler = await cms.list(ctx(), 'default', { labelSelector: 'mod3=1', stream: { separator: NL } })
  t.same(names([...split(viaHandler.joined), ...(await collect(viaHandler.rest)).flat()]), names((await cms.list(ctx(), 'default', { labelSelector: 'mod3=1' })).items))
})
