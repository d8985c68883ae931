// The client half of an HTTP/1.1 upgrade to SPDY/3.1: writes the request head and reads the answer, keeping the
// bytes after a 101 (the start of the SPDY connection) or the body of a refusal (a Status, usually).

import type { Duplex } from 'node:stream'

export interface UpgradeAnswer {
  status: number
  /** Header names lowercased; the last value of a repeated header wins. */
  headers: Record<string, string>
  /** After a 101: bytes already read past the head. Otherwise: the answer's body. */
  rest: Buffer
}

const MAX_HEAD = 64 * 1024

/**
 * Sends `head` (request line and headers, without the blank line) on `socket` and resolves with the answer.
 * A refusal's body is read up to its Content-Length or the connection's end; the socket is then left to the caller.
 */
export function requestUpgrade (socket: Duplex, head: string[], timeoutMs = 30_000): Promise<UpgradeAnswer> {
  return new Promise((resolve, reject) => {
    let buf = Buffer.alloc(0)
    let answer: UpgradeAnswer | undefined
    let bodyLength = -1
    const timer = setTimeout(() => fail(new Error('timed out waiting for the upgrade answer')), timeoutMs)
    const cleanup = (): void => {
      clearTimeout(timer)
      socket.off('data', onData); socket.off('end', onEnd); socket.off('error', fail); socket.off('close', onEnd)
    }
    function fail (err: Error): void { cleanup(); reject(err) }
    function done (a: UpgradeAnswer): void { cleanup(); resolve(a) }
    function onEnd (): void {
      if (answer !== undefined) done({ ...answer, rest: buf })
      else fail(new Error('connection closed before the upgrade answer'))
    }
    function onData (chunk: Buffer): void {
      buf = Buffer.concat([buf, chunk])
      if (answer === undefined) {
        const end = buf.indexOf('\r\n\r\n')
        if (end < 0) { if (buf.length > MAX_HEAD) fail(new Error('upgrade answer head too long')); return }
        const lines = buf.subarray(0, end).toString('latin1').split('\r\n')
        const m = /^HTTP\/1\.[01] (\d{3})/.exec(lines[0] ?? '')
        if (m === null) { fail(new Error(`malformed upgrade answer: ${JSON.stringify(lines[0])}`)); return }
        const headers: Record<string, string> = {}
        for (const line of lines.slice(1)) {
          const at = line.indexOf(':')
          if (at > 0) headers[line.slice(0, at).trim().toLowerCase()] = line.slice(at + 1).trim()
        }
        answer = { status: Number(m[1]), headers, rest: Buffer.alloc(0) }
        buf = buf.subarray(end + 4)
        if (answer.status === 101) { socket.pause(); done({ ...answer, rest: buf }); return }
        const cl = headers['content-length']
        bodyLength = cl !== undefined && /^\d+$/.test(cl) ? Number(cl) : -1
      }
      if (bodyLength >= 0 && buf.length >= bodyLength) done({ ...answer, rest: buf.subarray(0, bodyLength) })
    }
    socket.on('data', onData); socket.on('end', onEnd); socket.on('error', fail); socket.on('close', onEnd)
    socket.write(head.join('\r\n') + '\r\n\r\n')
  })
}
