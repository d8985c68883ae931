// The managers kept per object revision: the bound, and the same stored objects and answers with them as without
// them (the slow path decodes managedFields and schema-validates all of the object on every apply).

import t from 'tap'
import { RevisionManagers } from './revision-managers.js'
import { isStatusError } from '../../errors/status-error.js'
import type { RequestContext } from '../types.js'
import type { GenericStore } from '../generic-store.js'
import { ctx, openFixture } from '../testing.js'
import { objectKey } from '../keys.js'

t.test('an entry serves only its revision, and the least recently used goes first', async t => {
  const kept = new RevisionManagers(2)
  const managers = { entries: [] }
  kept.put('a', 1, managers)
  t.equal(kept.get('a', 2), undefined, 'another revision is a miss')
  t.equal(kept.get('a', 1), undefined, 'and the entry is gone')
  kept.put('a', 3, managers)
  kept.put('b', 4, managers)
  t.equal(kept.get('a', 3), managers, 'a used last')
  kept.put('c', 5, managers)
  t.equal(kept.size, 2)
  t.equal(kept.get('b', 4), undefined, 'b was the least recently used')
  t.equal(kept.get('c', 5), managers)
  const none = new RevisionManagers(0)
  none.put('a', 1, managers)
  t.equal(none.size, 0, 'capacity 0 keeps nothing')
})

const as = (fieldManager: string, extra: Partial<RequestContext> = {}): RequestContext => ({ ...ctx(), fieldManager, ...extra })

function deployment (name: string, image: string, extra: { sidecar?: boolean, replicas?: number, label?: string } = {}): Record<string, unknown> {
  const containers: unknown[] = [{ name: 'app', image, ports: [{ containerPort: 80 }], env: [{ name: 'A', value: image }] }]
  if (extra.sidecar === true) containers.push({ name: 'proxy', image: 'proxy:1' })
  const spec: Record<string, unknown> = {
    selector: { matchLabels: { app: name } },
    template: { metadata: { labels: { app: name } }, spec: { containers } }
  }
  if (extra.replicas !== undefined) spec.replicas = extra.replicas
  const labels: Record<string, string> = { app: name }
  if (extra.label !== undefined) labels.extra = extra.label
  return { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name, namespace: 'default', labels }, spec }
}

/** One step of the sequence, run on object `name`: its answer (status code or `ok`) and the stored object after it. */
type Step = (deploys: GenericStore, name: string) => Promise<unknown>

const steps: Step[] = [
  async (d, n) => await d.apply(as('deployer'), 'default', n, deployment(n, 'app:1', { sidecar: true }), false),
  async (d, n) => await d.apply(as('deployer'), 'default', n, deployment(n, 'app:2', { sidecar: true }), false),
  async (d, n) => { // invalid: refused with the errors of validating everything
    const config = deployment(n, 'app:2', { sidecar: true }) as any
    config.spec.template.spec.containers[1].imagePullPolicy = 'Sometimes'
    config.spec.template.spec.containers[0].ports[0].containerPort = 2 ** 40
    return await d.apply(as('deployer'), 'default', n, config, false)
  },
  async (d, n) => { // invalid: an enum
    const config = deployment(n, 'app:2', { sidecar: true }) as any
    config.spec.template.spec.containers[1].imagePullPolicy = 'Sometimes'
    return await d.apply(as('deployer'), 'default', n, config, false)
  },
  async (d, n) => await d.apply(as('scaler'), 'default', n, { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: n }, spec: { replicas: 4 } }, false),
  async (d, n) => await d.apply(as('deployer'), 'default', n, deployment(n, 'app:3', { sidecar: true, replicas: 2 }), false), // conflict
  async (d, n) => await d.apply(as('deployer'), 'default', n, deployment(n, 'app:3', { sidecar: true, replicas: 2 }), true),
  async (d, n) => await d.apply(as('deployer'), 'default', n, deployment(n, 'app:4', { label: 'x' }), false), // prunes the sidecar
  async (d, n) => await d.apply(as('deployer'), 'default', n, deployment(n, 'app:4', { label: 'x' }), false), // no-op
  async (d, n) => await d.apply(as('deployer', { dryRun: true }), 'default', n, deployment(n, 'app:5'), false),
  async (d, n) => await d.apply(as('deployer'), 'default', n, deployment(n, 'app:5'), false),
  async (d, n) => await d.apply(as('other'), 'default', n, { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: n, labels: { extra: 'y' } } }, true),
  async (d, n) => await d.apply(as('deployer'), 'default', n, deployment(n, 'app:6'), false)
]

/** The stored object and answers with names, uids and times made comparable between two objects. */
function comparable (text: string, name: string): string {
  return text
    .replaceAll(name, 'NAME')
    .replace(/"uid":"[^"]*"/g, '"uid":"UID"')
    .replace(/"resourceVersion":"\d+"/g, '"resourceVersion":"RV"')
}

t.test('applies with kept managers store and answer exactly what they store and answer decoding every time', async t => {
  const now = Date.UTC(2024, 0, 1)
  const fx = await openFixture({ clock: { now: () => now } })
  t.teardown(() => fx.close())
  const deploys = fx.registry.handler('apps', 'v1', 'deployments') as GenericStore
  const run = async (name: string): Promise<string[]> => {
    const seen: string[] = []
    for (const step of steps) {
      let answer: unknown
      try {
        const res = await step(deploys, name) as { bytes: Buffer, created: boolean }
        answer = { created: res.created, bytes: comparable(res.bytes.toString(), name) }
      } catch (err) {
        if (!isStatusError(err)) throw err
        answer = { code: err.code, message: comparable(err.message, name) }
      }
      const stored = await fx.store.get(objectKey(deploys.core.def, 'default', name))
      seen.push(JSON.stringify({ answer, stored: comparable(stored?.value.toString() ?? '', name) }))
    }
    return seen
  }
  const fm = deploys.core.fieldManager
  const apply = fm.apply.bind(fm)
  let withKept = 0
  fm.apply = (...args: Parameters<typeof fm.apply>) => {
    if (args[6] !== undefined) withKept++
    return apply(...args)
  }
  const fast = await run('kept')
  t.ok(withKept >= 5, `applies started from kept managers (${withKept})`)
  withKept = 0
  deploys.core.revisionManagers = new RevisionManagers(0)
  const slow = await run('parsed')
  t.equal(withKept, 0, 'none without the cache')
  t.equal(fast.length, steps.length)
  for (let i = 0; i < steps.length; i++) t.equal(fast[i], slow[i], `step ${i + 1}`)
  t.match(fast[2], /"code":400.*int32/, 'the sequence meets a schema type error')
  t.match(fast[3], /"code":422.*Sometimes/, 'a schema enum error')
  t.match(fast[5], /"code":409/, 'a conflict')
  t.notMatch(fast[7], /proxy:1/, 'and a prune')
})
