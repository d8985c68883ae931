// The CRI container log format, as the kubelet reads it: `<RFC3339Nano> <stdout|stderr> <F|P> <content>\n`.
// Complete lines are tagged F; a line longer than `maxLineBytes` is cut into P pieces; `flush` ends a
// trailing partial line as F (as containerd does at EOF).

export type LogStream = 'stdout' | 'stderr'

/** Format epoch nanoseconds as RFC 3339 with nine fractional digits, in UTC. */
export function rfc3339Nano (epochNs: bigint): string {
  const ms = Number(epochNs / 1_000_000n)
  const iso = new Date(ms).toISOString() // YYYY-MM-DDTHH:MM:SS.mmmZ
  const frac = (epochNs % 1_000_000_000n).toString().padStart(9, '0')
  return `${iso.slice(0, 19)}.${frac}Z`
}

export class CriLogWriter {
  private readonly pending: Record<LogStream, Buffer[]> = { stdout: [], stderr: [] }
  private readonly pendingBytes: Record<LogStream, number> = { stdout: 0, stderr: 0 }

  constructor (
    private readonly sink: (bytes: Buffer) => void,
    private readonly nowNs: () => bigint,
    private readonly maxLineBytes = 16 * 1024
  ) {}

  write (stream: LogStream, chunk: Buffer): void {
    let pos = 0
    while (pos < chunk.length) {
      const nl = chunk.indexOf(0x0a, pos)
      if (nl < 0) {
        this.pending[stream].push(chunk.subarray(pos))
        this.pendingBytes[stream] += chunk.length - pos
        if (this.pendingBytes[stream] >= this.maxLineBytes) this.emit(stream, 'P')
        return
      }
      this.pending[stream].push(chunk.subarray(pos, nl))
      this.emit(stream, 'F')
      pos = nl + 1
    }
  }

  flush (): void {
    for (const s of ['stdout', 'stderr'] as const) if (this.pendingBytes[s] > 0) this.emit(s, 'F')
  }

  private emit (stream: LogStream, tag: 'F' | 'P'): void {
    const content = Buffer.concat(this.pending[stream])
    this.pending[stream] = []
    this.pendingBytes[stream] = 0
    this.sink(Buffer.concat([Buffer.from(`${rfc3339Nano(this.nowNs())} ${stream} ${tag} `), content, Buffer.from('\n')]))
  }
}

/** Parse CRI log text back into entries (for tests and the agent's log endpoint). */
export function parseCriLog (text: string): { time: string; stream: LogStream; tag: 'F' | 'P'; content: string }[] {
  const out: { time: string; stream: LogStream; tag: 'F' | 'P'; content: string }[] = []
  for (const line of text.split('\n')) {
    const m = /^(\S+) (stdout|stderr) (F|P) (.*)$/.exec(line)
    if (m) out.push({ time: m[1], stream: m[2] as LogStream, tag: m[3] as 'F' | 'P', content: m[4] })
  }
  return out
}
