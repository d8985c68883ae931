// The commit queue on a real LMDB layout whose flush is made to fail: the batch's writes fail, the store reports it
// once, and every write after it is refused, including writes queued behind the failed flush.
import t from 'tap'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pino } from 'pino'
import { CommitQueue, type WriteOp } from './commit-queue.js'
import { openLayout, type Layout } from './layout.js'
import { SpaceGuard } from './space-guard.js'
import { StorageError, type KeyValue } from '../store.js'

/** `layout` whose root's second batch's `flushed` is held until `fail()` rejects it; `asked` once the queue awaits it. */
function heldSecondFlush (layout: Layout): { layout: Layout, asked: () => boolean, fail: () => void } {
  let batches = 0
  let reject: ((err: Error) => void) | undefined
  const held = new Promise<void>((_resolve, rej) => { reject = rej })
  const root = new Proxy(layout.root, {
    get (target, prop) {
      if (prop === 'flushed') return ++batches === 2 ? held : target.flushed
      const v = Reflect.get(target, prop, target) as unknown
      return typeof v === 'function' ? v.bind(target) : v
    }
  })
  return { layout: { ...layout, root }, asked: () => batches >= 2, fail: () => reject?.(new Error('EIO: fdatasync failed')) }
}

function write (queue: CommitQueue, key: string): Promise<KeyValue> {
  return new Promise((resolve, reject) => {
    const op: WriteOp = { kind: 'create', key, encode: () => Buffer.from(`{"k":"${key}"}`), resolve, reject }
    queue.submit(op)
  })
}

t.test('a failed flush fails its batch, is reported once, and refuses every later write', async t => {
  const dir = mkdtempSync(join(tmpdir(), 'orch-cq-'))
  const layout = openLayout(dir)
  t.teardown(async () => { await layout.root.close(); rmSync(dir, { recursive: true, force: true }) })
  const logger = pino({ level: 'silent' })
  const space = new SpaceGuard({ path: dir, quotaBytes: 0, reserveBytes: 0, resumeBytes: 0, measure: () => ({ storeBytes: 0, inUseBytes: 0, freeBytes: 1 << 30 }), now: Date.now, logger })
  const fatal: StorageError[] = []
  const published: number[] = []
  const flush = heldSecondFlush(layout)
  const queue = new CommitQueue({
    layout: flush.layout, now: Date.now, logger, space,
    publish: (_events, revision) => { published.push(revision) },
    onFatal: err => { fatal.push(err) }
  }, 0)
  const first = await write(queue, '/a')
  t.equal(first.modRevision, 1, 'the first batch flushes and is acknowledged')
  const second = write(queue, '/b')
  while (!flush.asked()) await new Promise(resolve => setImmediate(resolve))
  // Queued while the second batch is being flushed: it waits for that flush, which fails.
  const third = write(queue, '/c')
  flush.fail()
  await t.rejects(second, { code: 'Internal', message: /flush failed: Error: EIO/ })
  await t.rejects(third, { code: 'Internal', message: /refuses writes until it is reopened/ })
  await t.rejects(write(queue, '/d'), { code: 'Internal', message: /refuses writes until it is reopened/ })
  t.equal(fatal.length, 1, 'reported once')
  t.same(published, [1], 'only the durable batch reaches watchers')
  await queue.close()
})
