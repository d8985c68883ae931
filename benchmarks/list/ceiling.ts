// The LIST ceiling: a minimal HTTPS server (the serving pair orch used) answering each GET with the response bytes
// orch sent for the same URL, recorded once and loaded into memory before it listens. Env: CERT, KEY, RESPONSES (a
// JSON file: {'[gzip ]url': {file, gzip}}). Unknown URLs answer 404. Prints its port on stdout.

import { readFileSync } from 'node:fs'
import { createServer } from 'node:https'

interface Recorded { file: string, gzip: boolean }
const index = JSON.parse(readFileSync(process.env.RESPONSES!, 'utf8')) as Record<string, Recorded>
const bodies = new Map<string, { body: Buffer, headers: Record<string, string> }>()
for (const [key, r] of Object.entries(index)) {
  const body = readFileSync(r.file)
  const headers: Record<string, string> = { 'Content-Type': 'application/json' }
  if (r.gzip) headers['Content-Encoding'] = 'gzip'
  else headers['Content-Length'] = String(body.length)
  bodies.set(key, { body, headers })
}

const server = createServer({ cert: process.env.CERT, key: process.env.KEY, requestCert: true, rejectUnauthorized: false }, (req, res) => {
  const gzip = (req.headers['accept-encoding'] ?? '').includes('gzip')
  const found = bodies.get((gzip ? 'gzip ' : '') + (req.url ?? ''))
  if (found === undefined) { res.writeHead(404); res.end(); return }
  res.writeHead(200, found.headers)
  res.end(found.body)
})
server.listen(0, '127.0.0.1', () => {
  const a = server.address()
  process.stdout.write(`${typeof a === 'object' && a !== null ? a.port : 0}\n`)
})
