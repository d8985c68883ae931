// The fan-out ceiling: a minimal HTTPS server doing only what fan-out must do. A POST is answered 201 with
// the object and its event line queued (pre-encoded once); once per tick every watcher gets the tick's events
// as one HTTP chunk through cork/writev. Env: CERT, KEY (serving pair), META_BYTES (padding standing in for
// the metadata a real server adds). Prints its port on stdout.

import { createServer } from 'node:https'
import type { Socket } from 'node:net'

const pad = 'm'.repeat(Number(process.env.META_BYTES ?? 0))
const watchers = new Set<Socket>()
let pending: Buffer[] = []
let pendingBytes = 0
let rv = 1
let scheduled = false
const HEAD = Buffer.from('{"type":"ADDED","object":')
const TAIL = Buffer.from('}\n')
const CRLF = Buffer.from('\r\n')

function flush (): void {
  scheduled = false
  const evs = pending
  const size = Buffer.from(pendingBytes.toString(16) + '\r\n')
  pending = []
  pendingBytes = 0
  for (const s of watchers) {
    s.cork()
    s.write(size)
    for (const e of evs) s.write(e)
    s.write(CRLF)
    s.uncork()
  }
}

const server = createServer({ cert: process.env.CERT, key: process.env.KEY, requestCert: true, rejectUnauthorized: false }, (req, res) => {
  if (req.method === 'GET' && req.url?.includes('watch=') === true) {
    res.writeHead(200, { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' })
    res.flushHeaders()
    const s = res.socket!
    watchers.add(s)
    s.on('close', () => watchers.delete(s))
    return
  }
  if (req.method === 'GET') { res.end(`{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"${rv}"},"items":[]}`); return }
  const parts: Buffer[] = []
  req.on('data', (c: Buffer) => parts.push(c))
  req.on('end', () => {
    const body = Buffer.concat(parts).toString()
    // The stored object: the body with a resourceVersion and padding where a real server's metadata would be.
    const obj = Buffer.from(body.replace('"metadata":{', `"metadata":{"resourceVersion":"${++rv}","x":"${pad}",`))
    const ev = Buffer.concat([HEAD, obj, TAIL])
    pending.push(ev)
    pendingBytes += ev.length
    if (!scheduled) { scheduled = true; setImmediate(flush) }
    res.writeHead(201, { 'Content-Type': 'application/json' })
    res.end(obj)
  })
})
server.listen(0, '127.0.0.1', () => {
  const a = server.address()
  process.stdout.write(`${typeof a === 'object' && a !== null ? a.port : 0}\n`)
})
