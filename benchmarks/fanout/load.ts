// Load generator for the fan-out harness, in its own process: EVENTS ConfigMap creates of OBJECT_BYTES from
// CONCURRENCY connections. Env: URL, CERT, KEY, EVENTS, CONCURRENCY, OBJECT_BYTES, PREFIX, LABEL_EVERY (every n-th
// ConfigMap labelled sel=yes, the others sel=no; default none labelled). IPC: {seconds} when done.

import { Pool } from 'undici'

const url = process.env.URL!
const events = Number(process.env.EVENTS ?? 2000)
const concurrency = Number(process.env.CONCURRENCY ?? 64)
const payload = 'x'.repeat(Number(process.env.OBJECT_BYTES ?? 1024))
const prefix = process.env.PREFIX ?? 'cm'
const labelEvery = Number(process.env.LABEL_EVERY ?? 0)
const labels = (n: number): Record<string, unknown> => labelEvery > 0 ? { labels: { sel: n % labelEvery === 0 ? 'yes' : 'no' } } : {}
const base = '/api/v1/namespaces/default/configmaps'

const pool = new Pool(url, {
  connections: concurrency, pipelining: 1, connectTimeout: 120_000, headersTimeout: 300_000, bodyTimeout: 300_000,
  connect: { cert: process.env.CERT, key: process.env.KEY, rejectUnauthorized: false }
})
process.on('message', async () => {
  const t0 = process.hrtime.bigint()
  let next = 0
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next < events) {
      const n = next++
      const res = await pool.request({
        method: 'POST', path: base, headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `${prefix}-${n}`, ...labels(n) }, data: { payload } })
      })
      await res.body.dump()
      if (res.statusCode !== 201) throw new Error(`create answered ${res.statusCode}`)
    }
  }))
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9
  await pool.close()
  process.send!({ seconds }, () => process.exit(0))
})
// Open every connection (TLS handshakes) before the measured window, with reads that make no events.
await Promise.all(Array.from({ length: concurrency }, async () => {
  const res = await pool.request({ method: 'GET', path: base })
  await res.body.dump()
}))
process.send!({ ready: true })
