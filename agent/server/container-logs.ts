// Reads CRI-format container log files ("<time> <stream> <P|F> <text>") back into what `kubectl logs` shows.

import { createReadStream, existsSync, statSync } from 'node:fs'
import type { Writable } from 'node:stream'

export interface LogQuery {
  tailLines?: number
  limitBytes?: number
  timestamps: boolean
  sinceSeconds?: number
  follow: boolean
}

interface LogLine { time: string; text: string; partial: boolean }

export function parseCriLine (line: string): LogLine | undefined {
  const a = line.indexOf(' ')
  const b = line.indexOf(' ', a + 1)
  const c = line.indexOf(' ', b + 1)
  if (a < 0 || b < 0) return undefined
  const tag = c < 0 ? line.slice(b + 1) : line.slice(b + 1, c)
  return { time: line.slice(0, a), partial: tag === 'P', text: c < 0 ? '' : line.slice(c + 1) }
}

function render (lines: LogLine[], q: LogQuery, nowMs: number): string {
  const since = q.sinceSeconds !== undefined ? nowMs - q.sinceSeconds * 1000 : undefined
  const out: string[] = []
  let pending = ''
  for (const l of lines) {
    if (since !== undefined && Date.parse(l.time) < since) continue
    pending += l.text
    if (l.partial) continue
    out.push(q.timestamps ? `${l.time} ${pending}` : pending)
    pending = ''
  }
  const kept = q.tailLines !== undefined && q.tailLines >= 0 ? out.slice(Math.max(0, out.length - q.tailLines)) : out
  let text = kept.length > 0 ? kept.join('\n') + '\n' : ''
  if (q.limitBytes !== undefined && q.limitBytes > 0 && Buffer.byteLength(text) > q.limitBytes) {
    text = Buffer.from(text).subarray(0, q.limitBytes).toString('utf8')
  }
  return text
}

async function readAll (path: string, from: number): Promise<{ text: string; end: number }> {
  if (!existsSync(path)) return { text: '', end: from }
  const size = statSync(path).size
  if (size <= from) return { text: '', end: from }
  const chunks: Buffer[] = []
  for await (const chunk of createReadStream(path, { start: from, end: size - 1 })) chunks.push(chunk as Buffer)
  return { text: Buffer.concat(chunks).toString('utf8'), end: size }
}

function splitComplete (text: string): { lines: LogLine[]; rest: string } {
  const nl = text.lastIndexOf('\n')
  const complete = nl < 0 ? '' : text.slice(0, nl)
  const lines = complete === '' ? [] : complete.split('\n').map(parseCriLine).filter((l): l is LogLine => l !== undefined)
  return { lines, rest: nl < 0 ? text : text.slice(nl + 1) }
}

/**
 * Writes the log to `out`. With follow, keeps polling the file until `stillRunning()` is false or
 * `signal` aborts, then ends.
 */
export async function writeContainerLog (path: string, q: LogQuery, out: Writable, stillRunning: () => boolean, signal: AbortSignal, now = Date.now): Promise<void> {
  let { text, end } = await readAll(path, 0)
  let { lines, rest } = splitComplete(text)
  out.write(render(lines, q, now()))
  if (!q.follow) { out.end(); return }
  const follow: LogQuery = { ...q, tailLines: undefined }
  while (!signal.aborted) {
    await new Promise(resolve => setTimeout(resolve, 200))
    const next = await readAll(path, end)
    end = next.end
    ;({ lines, rest } = splitComplete(rest + next.text))
    if (lines.length > 0) out.write(render(lines, follow, now()))
    if (!stillRunning() && next.text === '') break
  }
  out.end()
}
