// LIST client for the list harness, in its own process: one keep-alive connection; on {cmd, path, reps} runs the
// LISTs one after another and answers the seconds of each (request sent to last body byte). Commands: `full` (one
// GET), `gzip` (one GET with Accept-Encoding: gzip, the compressed bytes counted, not inflated), `paged` (GET with
// limit=LIMIT following `continue` to the end, the whole walk timed). Env: URL, CERT, KEY, LIMIT. IPC answers
// {seconds: number[], bytes, pages}.

import { Pool } from 'undici'

const pool = new Pool(process.env.URL!, {
  connections: 1, pipelining: 1, headersTimeout: 300_000, bodyTimeout: 300_000,
  connect: { cert: process.env.CERT, key: process.env.KEY, rejectUnauthorized: false }
})
const limit = Number(process.env.LIMIT ?? 500)
const CONTINUE = /"continue":"([^"]*)"/

/** One GET; the body is counted, and its first bytes kept (the list metadata, for `continue`). */
async function get (path: string, gzip: boolean): Promise<{ bytes: number, head: string }> {
  const res = await pool.request({ method: 'GET', path, headers: gzip ? { 'accept-encoding': 'gzip' } : {} })
  if (res.statusCode !== 200) throw new Error(`GET ${path} answered ${res.statusCode}: ${await res.body.text()}`)
  let bytes = 0
  let head = ''
  for await (const c of res.body) {
    if (head.length < 4096) head += (c as Buffer).toString('latin1', 0, Math.min((c as Buffer).length, 4096))
    bytes += (c as Buffer).length
  }
  return { bytes, head }
}

async function once (cmd: string, path: string): Promise<{ bytes: number, pages: number }> {
  if (cmd !== 'paged') return { bytes: (await get(path, cmd === 'gzip')).bytes, pages: 1 }
  let bytes = 0
  let pages = 0
  let token = ''
  do {
    const r = await get(`${path}${path.includes('?') ? '&' : '?'}limit=${limit}${token === '' ? '' : `&continue=${encodeURIComponent(token)}`}`, false)
    bytes += r.bytes
    pages++
    token = CONTINUE.exec(r.head)?.[1] ?? ''
  } while (token !== '')
  return { bytes, pages }
}

process.on('message', async (m: { cmd: string, path: string, reps: number }) => {
  if (m.cmd === 'stop') { await pool.close(); process.exit(0) }
  const seconds: number[] = []
  let last = { bytes: 0, pages: 0 }
  for (let i = 0; i < m.reps; i++) {
    const t0 = process.hrtime.bigint()
    last = await once(m.cmd, m.path)
    seconds.push(Number(process.hrtime.bigint() - t0) / 1e9)
  }
  process.send!({ seconds, ...last })
})
process.send!({ ready: true })
