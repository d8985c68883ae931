// The text of managed-fields entries kept beside their trees: serializing with it gives JSON.stringify's bytes, parsing
// around it gives JSON.parse's object, and stored objects are byte for byte those of the path without it.

import t from 'tap'
import { FieldManager } from './field-manager.js'
import { ManagedFieldsText, parseAroundEntries } from './managed-fields-text.js'
import { entriesFromWritten } from './written-managers.js'
import { mergeTypeOf } from './schema-types.js'
import { cloneJson } from '../patch/json-pointer.js'
import { canonical, rewriteResourceVersion } from '../object-meta.js'
import { isStatusError } from '../../errors/status-error.js'
import { ctx, openFixture, type Fixture } from '../testing.js'
import { objectKey } from '../keys.js'
import type { GenericStore } from '../generic-store.js'
import type { RequestContext } from '../types.js'

type Obj = Record<string, unknown>

function deployment (name: string, image: string, extra: { sidecar?: boolean, replicas?: number, note?: string } = {}): Obj {
  const containers: unknown[] = [{ name: 'app', image, ports: [{ containerPort: 80 }], env: [{ name: 'A', value: image }] }]
  if (extra.sidecar === true) containers.push({ name: 'proxy', image: 'proxy:1' })
  const spec: Obj = { selector: { matchLabels: { app: name } }, template: { metadata: { labels: { app: name } }, spec: { containers } } }
  if (extra.replicas !== undefined) spec.replicas = extra.replicas
  const metadata: Obj = { name, namespace: 'default', labels: { app: name } }
  // Text outside ASCII before and after the list: offsets are in bytes.
  if (extra.note !== undefined) metadata.annotations = { note: extra.note }
  return { apiVersion: 'apps/v1', kind: 'Deployment', metadata, spec }
}

t.test('stringify gives JSON.stringify, and the bytes parse around the list to what JSON.parse gives', async t => {
  const fx = await openFixture()
  t.teardown(() => fx.close())
  const core = (fx.registry.handler('apps', 'v1', 'deployments') as GenericStore).core
  let now = Date.UTC(2024, 0, 1)
  const fm = new FieldManager({ type: mergeTypeOf(core.def), apiVersion: 'apps/v1', statusSubresource: true, now: () => new Date(now) })
  const texts = new ManagedFieldsText()
  const steps: Array<(live: Obj) => Obj | undefined> = [
    l => fm.apply(l, { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'w' }, spec: { replicas: 3 } }, 'scaler', true),
    l => fm.apply(l, deployment('w', 'a:2', { sidecar: true, note: 'é ✓' }), 'deployer', false),
    l => fm.apply(l, deployment('w', 'a:3', { note: 'ü' }), 'deployer', false),
    l => {
      const next = cloneJson(l)
      ;(next.metadata as Obj).labels = { app: 'w', edited: 'yes' }
      fm.update(l, next, 'kubectl-edit')
      return next
    },
    l => fm.apply(l, deployment('w', 'a:4', { sidecar: true }), 'other', true)
  ]
  let live = fm.apply(undefined, deployment('w', 'a:1', { sidecar: true }), 'deployer', false) as Obj
  for (const [i, step] of steps.entries()) {
    now += 1000
    live = step(live) ?? live
    // As the registry stores it: resourceVersion before managedFields (what follows the list does not move).
    const obj = canonical({ ...live, metadata: { ...live.metadata as Obj, resourceVersion: '7' } }, 'apps/v1', 'Deployment')
    const json = texts.stringify(obj)
    t.equal(json, JSON.stringify(obj), `step ${i + 1}: the same text`)
    t.ok(texts.serialize(obj).equals(Buffer.from(JSON.stringify(obj))), `step ${i + 1}: serialized: the same bytes`)
    const stored = rewriteResourceVersion(Buffer.from(json), '12345')
    const text = texts.textOf((live.metadata as Obj).managedFields)
    if (text === undefined) {
      t.fail(`step ${i + 1}: the list's text is kept`)
      continue
    }
    const around = parseAroundEntries(stored, text)
    const written = fm.writtenManagers(live)
    if (around === undefined || written === undefined) {
      t.fail(`step ${i + 1}: parsed around the list`, { around: around === undefined, written: written === undefined })
      continue
    }
    ;(around.metadata as Obj).managedFields = entriesFromWritten(written)
    t.equal(JSON.stringify(around), stored.toString(), `step ${i + 1}: the object parsed around the list, rebuilt`)
    t.same(around, JSON.parse(stored.toString()), `step ${i + 1}: equal to parsing it whole`)
    t.equal(parseAroundEntries(Buffer.concat([stored, Buffer.from(' ')]), text), undefined, `step ${i + 1}: not where it was written: refused`)
    const edited = Buffer.from(stored)
    edited[stored.length - text.tail + 1] = 0x20 // inside the list: other bytes, same length
    t.equal(parseAroundEntries(edited, text), undefined, `step ${i + 1}: other bytes where the list was written: refused`)
  }
  // The kept text is used: a tree edited in place (which the contract rules out) is not seen.
  const list = (live.metadata as Obj).managedFields as Array<{ fieldsV1: Obj }>
  list[0].fieldsV1['f:edited'] = {}
  t.not(texts.stringify(live), JSON.stringify(live), 'an unchanged entry is not stringified again')
  const replaced = cloneJson(live)
  t.equal(texts.stringify(replaced), JSON.stringify(replaced), 'a copy (new trees) is stringified')
  t.equal(texts.stringify({ metadata: { managedFields: [{ fieldsV1: {}, manager: 'm' }] } }), '{"metadata":{"managedFields":[{"fieldsV1":{},"manager":"m"}]}}',
    'entries in another field order')
  t.ok(texts.serialize({ metadata: { note: 'é', managedFields: [{ fieldsV1: {}, manager: 'm' }] } }).equals(Buffer.from('{"metadata":{"note":"é","managedFields":[{"fieldsV1":{},"manager":"m"}]}}')),
    'serialized: entries in another field order')
})

const as = (fieldManager: string, extra: Partial<RequestContext> = {}): RequestContext => ({ ...ctx(), fieldManager, ...extra })

/** Writes by several managers: applies, updates (also of managedFields and /status), no-ops and a dry run. */
const steps: Array<(d: GenericStore, n: string) => Promise<unknown>> = [
  async (d, n) => await d.apply(as('deployer'), 'default', n, deployment(n, 'app:1', { sidecar: true }), false),
  async (d, n) => await d.apply(as('deployer'), 'default', n, deployment(n, 'app:2', { sidecar: true, note: 'é' }), false),
  async (d, n) => await d.apply(as('scaler'), 'default', n, { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: n }, spec: { replicas: 4 } }, false),
  async (d, n) => await d.apply(as('deployer'), 'default', n, deployment(n, 'app:3', { sidecar: true, note: 'é' }), false),
  async (d, n) => { // an update by another manager (kubectl edit)
    const cur = (await d.get(as('x'), 'default', n, {}) as { object: Obj }).object
    ;((cur.metadata as Obj).labels as Obj).edited = 'yes'
    return await d.update(as('kubectl-edit'), 'default', n, { object: cur, duplicateFields: [] })
  },
  async (d, n) => await d.apply(as('deployer'), 'default', n, deployment(n, 'app:4', { note: 'ü' }), false),
  async (d, n) => { // a status update
    const cur = (await d.get(as('x'), 'default', n, {}) as { object: Obj }).object
    cur.status = { observedGeneration: 3, replicas: 4 }
    return await d.update(as('controller'), 'default', n, { object: cur, duplicateFields: [] }, 'status')
  },
  async (d, n) => await d.apply(as('deployer'), 'default', n, deployment(n, 'app:5', { note: 'ü' }), false),
  async (d, n) => await d.apply(as('deployer'), 'default', n, deployment(n, 'app:5', { note: 'ü' }), false), // no-op
  async (d, n) => await d.apply(as('deployer', { dryRun: true }), 'default', n, deployment(n, 'app:6'), false),
  async (d, n) => { // an update changing the managed fields it sends (one entry dropped)
    const cur = (await d.get(as('x'), 'default', n, {}) as { object: Obj }).object
    const meta = cur.metadata as Obj
    meta.managedFields = (meta.managedFields as Obj[]).filter(e => e.manager !== 'scaler')
    return await d.update(as('kubectl-edit'), 'default', n, { object: cur, duplicateFields: [] })
  },
  async (d, n) => await d.apply(as('deployer'), 'default', n, deployment(n, 'app:7'), false),
  async (d, n) => await d.apply(as('other'), 'default', n, { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: n, labels: { extra: 'y' } } }, true),
  async (d, n) => await d.apply(as('deployer'), 'default', n, deployment(n, 'app:8'), false)
]

t.test('stored objects are byte for byte those of serializing and parsing whole', async t => {
  let now = Date.UTC(2024, 0, 1)
  const clock = { now: () => now }
  const fast = await openFixture({ clock })
  const slow = await openFixture({ clock })
  t.teardown(async () => { await fast.close(); await slow.close() })
  const fastDeploys = fast.registry.handler('apps', 'v1', 'deployments') as GenericStore
  const slowDeploys = slow.registry.handler('apps', 'v1', 'deployments') as GenericStore
  // Without kept text: every write stringifies whole, and every apply parses whole.
  slowDeploys.core.fieldManager.serialize = obj => Buffer.from(JSON.stringify(obj))
  const key = objectKey(fastDeploys.core.def, 'default', 'w')
  const stored = async (fx: Fixture): Promise<string> => ((await fx.store.get(key))?.value.toString() ?? '').replace(/"uid":"[^"]*"/, '"uid":"UID"')
  const answer = async (step: () => Promise<unknown>): Promise<string> => {
    try {
      const res = await step() as { bytes: Buffer }
      return res.bytes.toString().replace(/"uid":"[^"]*"/, '"uid":"UID"')
    } catch (err) {
      if (!isStatusError(err)) throw err
      return `${err.code} ${err.message}`
    }
  }
  let parsedAround = 0
  for (const [i, step] of steps.entries()) {
    now += 1000
    t.equal(await answer(async () => await step(fastDeploys, 'w')), await answer(async () => await step(slowDeploys, 'w')), `step ${i + 1}: the same answer`)
    const bytes = await stored(fast)
    t.equal(bytes, await stored(slow), `step ${i + 1}: the same stored bytes`)
    // What the next apply starts from, when this write was an apply's: the stored bytes parsed around the list.
    const kv = await fast.store.get(key)
    const kept = kv === undefined ? undefined : fastDeploys.core.revisionManagers.get(key, kv.modRevision)
    if (kv === undefined || kept?.text === undefined) continue
    const around = parseAroundEntries(kv.value, kept.text)
    if (around === undefined) {
      t.fail(`step ${i + 1}: the stored bytes parse around the list`)
      continue
    }
    ;(around.metadata as Obj).managedFields = entriesFromWritten(kept)
    t.same(around, JSON.parse(kv.value.toString()), `step ${i + 1}: parsed around the list, as parsed whole`)
    parsedAround++
  }
  t.ok(parsedAround >= 6, `applies' revisions parsed around their managed fields (${parsedAround})`)
  t.equal(slowDeploys.core.revisionManagers.get(key, (await slow.store.get(key))?.modRevision ?? 0)?.text, undefined, 'the slow path keeps no text')
})
