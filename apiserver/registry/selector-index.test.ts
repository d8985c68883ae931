// The selector index: indexed LISTs and watches answer exactly what unindexed ones do, for the selectors the system uses.
import t from 'tap'
import { body, ctx, openFixture, type Fixture } from './testing.js'
import type { ListQuery, ResourceHandler } from './types.js'
import { compileSelector, METADATA_FIELDS } from './selectors.js'
import { selectorIndexer, selectorIndexTerms } from './selector-index.js'

const NL = Buffer.from('\n')
const names = (items: Buffer[]): string[] => items.map(b => JSON.parse(b.toString()).metadata.name)
const split = (joined: Buffer | undefined): Buffer[] => joined === undefined || joined.length === 0 ? [] : joined.toString().split('\n').map(x => Buffer.from(x))

interface Side { fx: Fixture, cms: ResourceHandler, pods: ResourceHandler, events: ResourceHandler }
const sides: Side[] = []

async function side (unindexed: boolean): Promise<Side> {
  const fx = await openFixture({ unindexed })
  const h = (r: string): ResourceHandler => fx.registry.handler('', 'v1', r)!
  return { fx, cms: h('configmaps'), pods: h('pods'), events: h('events') }
}

/** The same writes on both sides: creates, label changes, deletes. */
async function populate (s: Side): Promise<void> {
  for (let i = 0; i < 30; i++) {
    const labels: Record<string, string> = { mod3: String(i % 3) }
    if (i % 7 === 0) labels.sel = 'yes'
    await s.cms.create(ctx(), i % 4 === 0 ? 'orch-system' : 'default', body({ metadata: { name: `cm-${i}`, labels }, data: {} }))
  }
  for (let i = 0; i < 30; i += 5) {
    const ns = i % 4 === 0 ? 'orch-system' : 'default'
    await s.cms.update(ctx(), ns, `cm-${i}`, body({ metadata: { name: `cm-${i}`, labels: { mod3: 'moved', sel: 'yes' } }, data: {} }))
  }
  for (let i = 1; i < 30; i += 9) await s.cms.delete(ctx(), i % 4 === 0 ? 'orch-system' : 'default', `cm-${i}`, {})
  const spec = (node?: string): Record<string, unknown> => ({ containers: [{ name: 'c', image: 'x' }], ...(node === undefined ? {} : { nodeName: node }) })
  for (let i = 0; i < 8; i++) {
    await s.pods.create(ctx(), 'default', body({ apiVersion: 'v1', kind: 'Pod', metadata: { name: `p-${i}`, labels: { app: i % 2 === 0 ? 'web' : 'db' } }, spec: spec(i % 3 === 0 ? undefined : `n${i % 3}`) }))
  }
  for (let i = 0; i < 6; i++) {
    await s.events.create(ctx(), 'default', body({
      apiVersion: 'v1', kind: 'Event', metadata: { name: `ev-${i}` }, reason: 'R', message: 'm',
      involvedObject: { kind: 'Pod', namespace: 'default', name: `p-${i % 2}`, uid: `u-${i % 2}` }
    }))
  }
}

t.before(async () => {
  for (const unindexed of [false, true]) {
    const s = await side(unindexed)
    sides.push(s)
    await populate(s)
  }
})
t.teardown(async () => { for (const s of sides) await s.fx.close() })

const LISTS: Array<[resource: 'cms' | 'pods' | 'events', namespace: string, q: ListQuery]> = [
  ['cms', '', { labelSelector: 'sel=yes' }],
  ['cms', 'default', { labelSelector: 'sel==yes' }],
  ['cms', '', { labelSelector: 'mod3 in (0,moved),sel!=no' }],
  ['cms', '', { labelSelector: 'mod3=1,sel' }],
  ['cms', '', { labelSelector: 'sel=yes', limit: 2 }],
  ['cms', 'default', { labelSelector: 'mod3 in (2,moved)', limit: 3 }],
  ['cms', '', { labelSelector: 'sel=yes', stream: { separator: NL } }],
  ['cms', '', { labelSelector: 'missing=x' }],
  ['cms', '', { labelSelector: 'mod3!=0' }],
  ['cms', '', { fieldSelector: 'metadata.name=cm-7' }],
  ['cms', 'orch-system', { fieldSelector: 'metadata.name=cm-8', labelSelector: 'sel' }],
  ['pods', '', { fieldSelector: 'spec.nodeName=n1' }],
  ['pods', '', { fieldSelector: 'spec.nodeName=' }],
  ['pods', 'default', { fieldSelector: 'spec.nodeName=n2', labelSelector: 'app=web' }],
  ['pods', '', { fieldSelector: 'spec.nodeName!=n1', limit: 2 }],
  ['events', 'default', { fieldSelector: 'involvedObject.name=p-1,involvedObject.kind=Pod' }],
  ['events', '', { fieldSelector: 'involvedObject.uid=u-0' }]
]

/** Every item of the list, following continue tokens and streamed chunks. */
async function listAll (h: ResourceHandler, namespace: string, q: ListQuery): Promise<string[]> {
  const out: string[] = []
  let cont: string | undefined
  for (;;) {
    const res = await h.list(ctx(), namespace, { ...q, continue: cont })
    out.push(...names(res.joined !== undefined ? split(res.joined) : res.items))
    if (res.rest !== undefined) for await (const c of res.rest) out.push(...names(split(c)))
    if (res.continue === '') return out
    cont = res.continue
  }
}

t.test('indexed LISTs (labels, metadata.name, spec.nodeName, involvedObject.*) answer what scans answer', async t => {
  const [indexed, scanned] = sides
  for (const [r, ns, q] of LISTS) {
    const want = await listAll(scanned[r], ns, q)
    t.same(await listAll(indexed[r], ns, q), want, `${r} ${ns} ${JSON.stringify({ ...q, stream: q.stream === undefined ? undefined : true })}`)
  }
  // labelled at create (i % 7 = 0) or by the updates (i % 5 = 0), less the deleted (1, 10, 19, 28)
  t.same((await listAll(indexed.cms, '', { labelSelector: 'sel=yes' })).sort(), ['cm-0', 'cm-14', 'cm-15', 'cm-20', 'cm-21', 'cm-25', 'cm-5', 'cm-7'], 'the selection itself')
})

t.test('the store returns only candidates for an indexed selector', async t => {
  const [indexed] = sides
  const res = await indexed.fx.store.list('/core/configmaps/', { index: ['l:sel=yes'] })
  t.equal(res.items.length, 8, 'labelled ConfigMaps only')
  const pods = await indexed.fx.store.list('/core/pods/', { index: ['f:spec.nodeName=n1'] })
  t.same(names(pods.items.map(kv => kv.value)), ['p-1', 'p-4', 'p-7'])
})

t.test('which requirement a LIST reads the index by', async t => {
  const fields = { ...METADATA_FIELDS, 'spec.nodeName': METADATA_FIELDS['metadata.name'] }
  const terms = (l: string | undefined, f: string | undefined, prefix = '/core/pods/'): string[] | undefined => selectorIndexTerms(prefix, compileSelector(l, f, fields))
  t.same(terms('a=b,c=d', undefined), ['l:a=b'], 'the first label equality')
  t.same(terms('a in (x,y)', undefined), ['l:a=x', 'l:a=y'], 'a set: one term per value')
  t.same(terms('a!=b,c', 'spec.nodeName=n1'), ['f:spec.nodeName=n1'], 'no label equality: an indexed field')
  t.same(terms(undefined, 'spec.nodeName=n1', '/core/configmaps/'), undefined, 'fields are indexed per resource')
  t.same(terms(undefined, 'metadata.name=x', '/core/configmaps/'), ['f:metadata.name=x'])
  t.same(terms('a notin (b)', 'spec.nodeName!=n1'), undefined, 'nothing to read by: scan')
})

t.test('terms of a stored object', async t => {
  const pod = Buffer.from(JSON.stringify({ metadata: { name: 'p', labels: { app: 'web', tier: '' } }, spec: {} }))
  t.same(selectorIndexer.terms('/core/pods/ns/p', pod), ['l:app=web', 'l:tier=', 'f:metadata.name=p', 'f:spec.nodeName='])
  t.same(selectorIndexer.terms('/core/configmaps/ns/x', Buffer.from('not json')), [], 'unreadable: no terms')
})

t.test('terms from the object a write hands over are the terms of its bytes, without parsing them', async t => {
  const objects: Array<[string, Record<string, unknown>]> = [
    ['/core/pods/ns/p', { metadata: { name: 'p', labels: { app: 'web', tier: '' } }, spec: { nodeName: 'n1' } }],
    ['/core/events/ns/e', { metadata: { name: 'e' }, involvedObject: { kind: 'Pod', name: 'p', uid: 'u' } }],
    ['/core/configmaps/ns/c', { metadata: { name: 'c', labels: { a: 'b' } }, data: {} }]
  ]
  for (const [key, obj] of objects) {
    t.same(selectorIndexer.terms(key, Buffer.from('{}'), obj), selectorIndexer.terms(key, Buffer.from(JSON.stringify(obj))), key)
  }
  t.same(selectorIndexer.terms('/core/configmaps/ns/c', Buffer.from('{"metadata":{"name":"c"}}'), null), ['f:metadata.name=c'], 'no object: the bytes')
})
