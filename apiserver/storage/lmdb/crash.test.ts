// kill -9 at any moment: after a restart the store serves every acknowledged write, revisions go on.
import t from 'tap'
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import { openLmdbStore } from './index.js'

const here = dirname(fileURLToPath(import.meta.url))
const writer = join(here, 'crash-writer.ts')
const repoRoot = resolve(here, '../../..')

interface Acks { creates: Map<string, number>, updates: Map<string, number>, maxRev: number, readyRev: number }

/** Runs the writer until `killWhen` says so, then SIGKILLs it; returns the acks it printed. */
async function runAndKill (path: string, tag: string, killWhen: (acks: number, sinceReadyMs: number) => boolean): Promise<Acks> {
  const child = spawn(process.execPath, ['--import', 'tsx', writer, path, tag], { cwd: repoRoot, stdio: ['ignore', 'pipe', 'inherit'] })
  const acks: Acks = { creates: new Map(), updates: new Map(), maxRev: 0, readyRev: -1 }
  let readyAt = 0
  let count = 0
  const exited = new Promise<NodeJS.Signals | null>(resolve => child.on('exit', (_code, signal) => resolve(signal)))
  for await (const line of createInterface({ input: child.stdout })) {
    const [kind, key, rev] = line.split(' ')
    if (kind === 'ready') { acks.readyRev = Number(key); readyAt = Date.now(); continue }
    const r = Number(rev)
    if (kind === 'create') acks.creates.set(key, r)
    else if (kind === 'update') acks.updates.set(key, Math.max(r, acks.updates.get(key) ?? 0))
    else continue
    acks.maxRev = Math.max(acks.maxRev, r)
    count++
    if (child.exitCode === null && child.signalCode === null && killWhen(count, Date.now() - readyAt)) child.kill('SIGKILL')
  }
  const signal = await exited
  if (signal !== 'SIGKILL') throw new Error(`writer ended without being killed (signal ${String(signal)})`)
  return acks
}

t.test('every acknowledged write survives kill -9 and revisions continue', async t => {
  const path = mkdtempSync(join(tmpdir(), 'orch-crash-'))
  t.teardown(() => rmSync(path, { recursive: true, force: true }))
  const plans: Array<(acks: number, ms: number) => boolean> = [
    acks => acks >= 300,
    (_acks, ms) => ms >= 37,
    acks => acks >= 1,
    (_acks, ms) => ms >= 120
  ]
  let lastRev = 0
  for (const [round, killWhen] of plans.entries()) {
    const acks = await runAndKill(path, `r${round}`, killWhen)
    t.ok(acks.readyRev >= lastRev, `round ${round}: the writer restarted at revision ${acks.readyRev} >= ${lastRev}`)
    const store = await openLmdbStore({ path })
    let missing = 0
    let wrong = 0
    for (const [key, rev] of acks.creates) {
      const kv = await store.get(key)
      if (kv === undefined) missing++
      else if (kv.modRevision !== rev || kv.value.toString() !== `${key}@${rev}`) wrong++
    }
    for (const [key, rev] of acks.updates) {
      const kv = await store.get(key)
      if (kv === undefined) missing++
      else if (kv.modRevision < rev || kv.value.toString() !== `${key}@${kv.modRevision}`) wrong++
    }
    t.equal(missing, 0, `round ${round}: no acknowledged key of ${acks.creates.size + acks.updates.size} is missing`)
    t.equal(wrong, 0, `round ${round}: every acknowledged value is there as written`)
    t.ok(store.currentRevision() >= acks.maxRev, `round ${round}: revision ${store.currentRevision()} >= last ack ${acks.maxRev}`)
    const probe = await store.create(`crash/probe/${round}`, rev => Buffer.from(String(rev)))
    t.equal(probe.modRevision, store.currentRevision())
    t.ok(probe.modRevision > acks.maxRev, 'a new write gets a newer revision than any acknowledged one')
    const all = await store.list('crash/')
    t.equal(all.items.filter(kv => kv.modRevision > all.revision).length, 0, 'the reopened snapshot is consistent')
    lastRev = store.currentRevision()
    await store.close()
  }
})
