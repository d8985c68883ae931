// Counting watch clients for the fan-out harness, in their own process: N TLS connections each sending one
// watch GET, counting event lines (`}\n`, never in chunk framing) with indexOf, no per-byte loop.
// Env: HOST, PORT, PATH_QS, WATCHERS, CERT, KEY (PEM, client certificate). IPC: 'count' -> {total, min, bytes}.

import { connect, type TLSSocket } from 'node:tls'

const host = process.env.HOST ?? '127.0.0.1'
const port = Number(process.env.PORT)
const path = process.env.PATH_QS ?? '/'
const watchers = Number(process.env.WATCHERS ?? 1)
const cert = process.env.CERT
const key = process.env.KEY
const EOL = Buffer.from('}\n')

const counts = new Array<number>(watchers).fill(0)
let bytes = 0
const sockets: TLSSocket[] = []

async function open (i: number): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    const s = connect({ host, port, cert, key, rejectUnauthorized: false, servername: undefined }, () => {
      s.write(`GET ${path} HTTP/1.1\r\nHost: ${host}\r\nAccept: application/json\r\nConnection: keep-alive\r\n\r\n`)
      resolve()
    })
    let tail = 0 // last byte of the previous read, so `}` | `\n` split across reads still counts
    s.on('data', (b: Buffer) => {
      bytes += b.length
      let n = 0
      if (tail === 0x7d && b[0] === 0x0a) n++
      let at = b.indexOf(EOL)
      while (at !== -1) { n++; at = b.indexOf(EOL, at + 2) }
      tail = b[b.length - 1]!
      counts[i]! += n
    })
    s.once('error', reject)
    sockets.push(s)
  })
}

// Open in small parallel groups so the server's accept queue is not flooded.
for (let i = 0; i < watchers; i += 50) {
  await Promise.all(Array.from({ length: Math.min(50, watchers - i) }, (_, k) => open(i + k)))
}
process.send!({ ready: true })
process.on('message', (m: { cmd: string }) => {
  if (m.cmd === 'count') {
    let total = 0
    let min = Infinity
    for (const c of counts) { total += c; if (c < min) min = c }
    process.send!({ total, min, bytes })
  } else if (m.cmd === 'stop') {
    for (const s of sockets) s.destroy()
    process.exit(0)
  }
})
