// Child process of the crash test: many concurrent writes to the store at argv[2], one stdout line per ack.
//
// Lines: `ready <revision>`, `create <key> <revision>` and `update <key> <revision>`; a line is printed
// only after the write's promise resolved (durable). Writes go on until the process is killed.
import { openLmdbStore } from './index.js'

const [path, tag] = process.argv.slice(2)
if (path === undefined || tag === undefined) throw new Error('usage: crash-writer <path> <tag>')
const store = await openLmdbStore({ path })
process.stdout.write(`ready ${store.currentRevision()}\n`)

let next = 0
async function worker (w: number): Promise<void> {
  const counter = `crash/counter/${tag}/${w}`
  await store.create(counter, rev => Buffer.from(`${counter}@${rev}`))
  for (;;) {
    const key = `crash/${tag}/${next++}`
    const kv = await store.create(key, rev => Buffer.from(`${key}@${rev}`))
    process.stdout.write(`create ${key} ${kv.modRevision}\n`)
    if (next % 3 === 0) {
      const up = await store.update(counter, rev => Buffer.from(`${counter}@${rev}`))
      process.stdout.write(`update ${counter} ${up.modRevision}\n`)
    }
  }
}

for (let w = 0; w < 16; w++) {
  worker(w).catch(err => { process.stderr.write(`writer ${w} failed: ${String(err)}\n`); process.exit(1) })
}
