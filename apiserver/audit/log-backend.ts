// The audit log backend (--audit-log-path): events become JSON lines, buffered and written in batches off the request path.

import type { Logger } from 'pino'
import { eventLine, type AuditEvent } from './event.js'
import { RotatingFile, type RotationOptions } from './rotating-file.js'

/** Where events go; `write` never blocks nor throws. */
export interface AuditSink {
  write(event: AuditEvent): void
  /** Writes what is buffered, then releases the file. */
  close(): Promise<void>
}

/** Where a batch of lines goes: the rotating file, or standard output for `--audit-log-path -`. */
export interface LineWriter {
  write(data: Buffer): Promise<void>
  close(): Promise<void>
}

export interface LogBackendOptions {
  writer: LineWriter
  logger: Logger
  /** Events held while a write is under way; past it new events are dropped (and that is logged once). Default 10,000. */
  bufferEvents?: number
  /** Largest batch written at once, in bytes (default 1 MiB). */
  batchBytes?: number
}

/** Buffers events and writes them in batches from one loop; a failing write loses its batch and is logged once per outage. */
export class LogBackend implements AuditSink {
  private pending: string[] = []
  private writing: Promise<void> | undefined
  private failing = false
  private dropping = false
  private closed = false
  private readonly bufferEvents: number
  private readonly batchBytes: number

  constructor (private readonly opts: LogBackendOptions) {
    this.bufferEvents = opts.bufferEvents ?? 10_000
    this.batchBytes = opts.batchBytes ?? 1024 * 1024
  }

  write (event: AuditEvent): void {
    if (this.closed) return
    if (this.pending.length >= this.bufferEvents) {
      if (!this.dropping) this.opts.logger.error({ buffered: this.pending.length }, 'audit log buffer is full; dropping audit events until it drains')
      this.dropping = true
      return
    }
    this.dropping = false
    this.pending.push(eventLine(event))
    // Batches form while the previous write is under way; the first event after a quiet spell waits one turn.
    this.writing ??= new Promise<void>(resolve => setImmediate(resolve)).then(async () => await this.drain())
  }

  private async drain (): Promise<void> {
    try {
      while (this.pending.length > 0) {
        const batch = this.takeBatch()
        try {
          await this.opts.writer.write(Buffer.from(batch, 'utf8'))
          if (this.failing) this.opts.logger.info('audit log writes succeed again')
          this.failing = false
        } catch (err) {
          if (!this.failing) this.opts.logger.error({ err }, 'cannot write the audit log; audit events are lost until writes succeed again')
          this.failing = true
        }
      }
    } finally {
      this.writing = undefined
    }
  }

  private takeBatch (): string {
    let n = 0
    let bytes = 0
    while (n < this.pending.length && (n === 0 || bytes + this.pending[n].length <= this.batchBytes)) bytes += this.pending[n++].length
    return this.pending.splice(0, n).join('')
  }

  async close (): Promise<void> {
    this.closed = true
    while (this.writing !== undefined) await this.writing
    if (this.pending.length > 0) await this.drain()
    try { await this.opts.writer.close() } catch (err) { this.opts.logger.error({ err }, 'cannot close the audit log') }
  }
}

/** Standard output as a line writer (`--audit-log-path -`); it is never closed. */
export function stdoutWriter (out: NodeJS.WritableStream = process.stdout): LineWriter {
  // A failed write also emits 'error'; the callback reports it, and an unheard 'error' would end the process.
  out.on('error', () => {})
  return {
    async write (data) { await new Promise<void>((resolve, reject) => out.write(data, err => err == null ? resolve() : reject(err))) },
    async close () {}
  }
}

/** The backend for `--audit-log-path`: `-` is standard output, else a rotating file created now (so a bad path fails at start). */
export async function openLogBackend (path: string, rotation: RotationOptions, logger: Logger, now?: () => number): Promise<LogBackend> {
  if (path === '-') return new LogBackend({ writer: stdoutWriter(), logger })
  const file = new RotatingFile(path, rotation, now, err => logger.error({ err }, 'cannot clean up rotated audit logs'))
  await file.ensure()
  return new LogBackend({ writer: file, logger })
}
