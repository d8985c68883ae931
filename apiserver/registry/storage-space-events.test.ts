// Events about the store's space, on a real registry whose store measures a fake disk.
import t from 'tap'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openLmdbStore } from '../storage/lmdb/index.js'
import type { SpaceUsage } from '../storage/lmdb/space-guard.js'
import { createRegistry } from './registry.js'
import { startStorageSpaceEvents } from './storage-space-events.js'
import { ctx, silentLogger } from './testing.js'

const sleep = (ms: number): Promise<void> => new Promise(resolve => setTimeout(resolve, ms))

t.test('StorageFull is kept while it cannot be written and written before StorageSpaceRecovered', async t => {
  const dir = mkdtempSync(join(tmpdir(), 'orch-space-events-'))
  let fake: Partial<SpaceUsage> | undefined
  const store = await openLmdbStore({ path: dir, spaceCheckIntervalMs: 20, measureSpace: m => ({ ...m(), ...fake }) })
  const registry = createRegistry({ store, logger: silentLogger, revisionWaitMs: 200, controllerRetryMs: 20 })
  await registry.start()
  let now = Date.parse('2024-05-01T10:00:00Z')
  const events = startStorageSpaceEvents({ registry, store, logger: silentLogger, clock: { now: () => now }, host: 'box-1' })
  t.teardown(async () => {
    await events.stop()
    await registry.stop()
    await store.close()
    rmSync(dir, { recursive: true, force: true })
  })
  const handler = registry.handler('', 'v1', 'events')
  if (handler === undefined) throw new Error('no events resource')
  const list = async (): Promise<Array<Record<string, any>>> =>
    (await handler.list(ctx(), 'default', {})).items.map(b => JSON.parse(b.toString()) as Record<string, any>)

  fake = { freeBytes: 0 }
  await sleep(200)
  t.ok(store.space().full)
  t.same(await list(), [], 'StorageFull could not be written while full')

  now += 60_000
  fake = undefined
  let items: Array<Record<string, any>> = []
  for (let i = 0; i < 100 && items.length < 2; i++) { await sleep(20); items = await list() }
  t.same(items.map(e => e.reason), ['StorageFull', 'StorageSpaceRecovered'])
  const [full, recovered] = items
  t.match(full, {
    metadata: { namespace: 'default' },
    involvedObject: { kind: 'APIServer', name: 'orch-apiserver' },
    type: 'Warning',
    firstTimestamp: '2024-05-01T10:00:00Z',
    count: 1,
    source: { component: 'orch-apiserver', host: 'box-1' }
  })
  t.match(full.message, /^storage is full: store .* is \d+ bytes \(\d+ in use\), 0 bytes free on its file system/)
  t.match(recovered, { type: 'Normal', firstTimestamp: '2024-05-01T10:01:00Z', reportingComponent: 'orch-apiserver', reportingInstance: 'box-1' })
  t.match(recovered.message, /^storage has room: /)
})

t.test('StorageFull is written at once when the store still takes it (a quota reached by a large write)', async t => {
  const written: string[] = []
  let listener: ((s: any) => void) | undefined
  const store = {
    space: () => ({ full: false }) as any,
    onSpaceChange: (l: (s: any) => void) => { listener = l; return () => { listener = undefined } }
  }
  const registry = {
    handler: () => ({ create: async (_c: unknown, _ns: string, b: { object: { reason: string } }) => { written.push(b.object.reason); return {} } })
  } as any
  const events = startStorageSpaceEvents({ registry, store, logger: silentLogger, clock: { now: () => 0 }, host: 'h' })
  listener?.({ full: true, message: 'storage is full: ...' })
  listener?.({ full: false, message: 'storage has room: ...' })
  await events.stop()
  t.same(written, ['StorageFull', 'StorageSpaceRecovered'])
  t.equal(listener, undefined, 'stop unsubscribes')
})
