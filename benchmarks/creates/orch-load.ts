// Load process of the creates harness against orch: COUNT ConfigMap creates (a `payload` of OBJECT_BYTES) over
// HTTPS from CLIENTS keep-alive connections (undici), one request in flight per connection; WARMUP creates first.
// Env: URL, CERT, KEY, COUNT, CLIENTS, OBJECT_BYTES, WARMUP, PREFIX; OP=dryrun: dry-run creates; OP=get: creates PREFIX-0, then every request
// (warm-up and measured) GETs it.

import { Pool } from 'undici'
import { closedLoop, serve } from './latency.js'

const count = Number(process.env.COUNT ?? 2000)
const clients = Number(process.env.CLIENTS ?? 1)
const warmup = Number(process.env.WARMUP ?? 500)
const payload = 'x'.repeat(Number(process.env.OBJECT_BYTES ?? 1024))
const prefix = process.env.PREFIX ?? 'cm'
const base = '/api/v1/namespaces/default/configmaps'

const pool = new Pool(process.env.URL!, {
  connections: clients, pipelining: 1, connectTimeout: 120_000, headersTimeout: 300_000, bodyTimeout: 300_000,
  connect: { cert: process.env.CERT, key: process.env.KEY, rejectUnauthorized: false }
})

// OP=dryrun: every create is a dry run (every stage but the store's commit).
const query = process.env.OP === 'dryrun' ? '?dryRun=All' : ''

async function create (name: string): Promise<void> {
  const res = await pool.request({
    method: 'POST', path: base + query, headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { payload } })
  })
  await res.body.dump()
  if (res.statusCode !== 201) throw new Error(`create answered ${res.statusCode}`)
}

async function read (name: string): Promise<void> {
  const res = await pool.request({ method: 'GET', path: `${base}/${name}` })
  await res.body.dump()
  if (res.statusCode !== 200) throw new Error(`get answered ${res.statusCode}`)
}

const gets = process.env.OP === 'get'
if (gets) await create(`${prefix}-0`) // not a dry run: OP is get
await serve(
  async () => { await closedLoop(warmup, clients, async i => { await (gets ? read(`${prefix}-0`) : create(`${prefix}-warm-${i}`)) }) },
  async () => await closedLoop(count, clients, async i => { await (gets ? read(`${prefix}-0`) : create(`${prefix}-${i}`)) }),
  async () => { await pool.close() }
)
