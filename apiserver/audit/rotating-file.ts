// A log file rotated by size as lumberjack rotates kube-apiserver's audit log: backups named `<name>-<UTC time><ext>`,
// pruned by count (--audit-log-maxbackup) and age in days (--audit-log-maxage), gzipped when asked (--audit-log-compress).

import { createReadStream, createWriteStream } from 'node:fs'
import { mkdir, open, readdir, rename, stat, unlink, type FileHandle } from 'node:fs/promises'
import { basename, dirname, extname, join } from 'node:path'
import { pipeline } from 'node:stream/promises'
import { createGzip } from 'node:zlib'

export interface RotationOptions {
  /** Megabytes (MiB) before the file is rotated; 0 = lumberjack's default of 100. */
  maxSizeMB: number
  /** Backups kept; 0 = all (subject to maxAgeDays). */
  maxBackups: number
  /** Days a backup is kept, by the time in its name; 0 = no limit. */
  maxAgeDays: number
  /** Backups are gzipped (`<name>-<time><ext>.gz`). */
  compress?: boolean
}

const MB = 1024 * 1024
const DAY_MS = 24 * 3600 * 1000

/** `2026-11-25T09-00-00.000`: lumberjack's backup time format (UTC), safe in file names. */
export function backupTimestamp (ms: number): string {
  return new Date(ms).toISOString().slice(0, 23).replace(/:/g, '-')
}

/** The time in a backup's name, or undefined for a name that is not one of ours. */
export function parseBackupTimestamp (stamp: string): number | undefined {
  const m = /^(\d{4}-\d{2}-\d{2})T(\d{2})-(\d{2})-(\d{2})\.(\d{3})$/.exec(stamp)
  if (m === null) return undefined
  const t = Date.parse(`${m[1]}T${m[2]}:${m[3]}:${m[4]}.${m[5]}Z`)
  return Number.isNaN(t) ? undefined : t
}

/** Appends to `path`, rotating before a write would take it past the size limit. Not safe for concurrent writes: one writer awaits each. */
export class RotatingFile {
  private handle: FileHandle | undefined
  /** The background clean-up of backups (pruning, compression), one at a time. */
  private milling: Promise<void> = Promise.resolve()
  private size = 0
  private readonly maxBytes: number
  private readonly prefix: string
  private readonly ext: string

  /** `onMillError` hears failures of the background clean-up, which never fail a write. */
  constructor (readonly path: string, private readonly opts: RotationOptions, private readonly now: () => number = Date.now,
    private readonly onMillError: (err: unknown) => void = () => {}) {
    this.maxBytes = (opts.maxSizeMB > 0 ? opts.maxSizeMB : 100) * MB
    this.ext = extname(path)
    this.prefix = basename(path, this.ext) + '-'
  }

  /** Creates the directory and the file (mode 0600) if missing, so a path that cannot be written fails at start. */
  async ensure (): Promise<void> {
    await mkdir(dirname(this.path), { recursive: true, mode: 0o700 })
    const h = await open(this.path, 'a', 0o600)
    await h.close()
  }

  async write (data: Buffer): Promise<void> {
    if (data.length > this.maxBytes) throw new Error(`write length ${data.length} exceeds maximum file size ${this.maxBytes}`)
    if (this.handle === undefined) await this.openExisting(data.length)
    else if (this.size + data.length > this.maxBytes) await this.rotate()
    const h = this.handle as FileHandle
    let off = 0
    while (off < data.length) {
      const { bytesWritten } = await h.write(data, off, data.length - off)
      off += bytesWritten
      this.size += bytesWritten
    }
  }

  /** Closes the file, after any clean-up under way. */
  async close (): Promise<void> {
    const h = this.handle
    this.handle = undefined
    await h?.close()
    await this.milling
  }

  private async openExisting (next: number): Promise<void> {
    this.mill()
    let size = -1
    try { size = (await stat(this.path)).size } catch (err) { if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err }
    if (size >= 0 && size + next > this.maxBytes) return await this.rotate()
    await mkdir(dirname(this.path), { recursive: true, mode: 0o700 })
    this.handle = await open(this.path, 'a', 0o600)
    this.size = Math.max(size, 0)
  }

  /** Moves the current file to a backup named for now, starts an empty one, then cleans up backups in the background. */
  private async rotate (): Promise<void> {
    const h = this.handle
    this.handle = undefined
    await h?.close()
    const backup = join(dirname(this.path), `${this.prefix}${backupTimestamp(this.now())}${this.ext}`)
    try { await rename(this.path, backup) } catch (err) { if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err }
    await mkdir(dirname(this.path), { recursive: true, mode: 0o700 })
    this.handle = await open(this.path, 'w', 0o600)
    this.size = 0
    this.mill()
  }

  /** The backups in the file's directory, newest first (a backup being compressed is listed once, as its plain file). */
  async backups (): Promise<Array<{ file: string; time: number; gzipped: boolean }>> {
    const byTime = new Map<number, { file: string; time: number; gzipped: boolean }>()
    let names: string[] = []
    try { names = await readdir(dirname(this.path)) } catch (err) { if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err }
    for (const f of names) {
      const gzipped = f.endsWith(this.ext + '.gz')
      if (!f.startsWith(this.prefix) || !(gzipped || f.endsWith(this.ext))) continue
      const time = parseBackupTimestamp(f.slice(this.prefix.length, f.length - this.ext.length - (gzipped ? 3 : 0)))
      if (time === undefined || (gzipped && byTime.has(time))) continue
      byTime.set(time, { file: join(dirname(this.path), f), time, gzipped })
    }
    return [...byTime.values()].sort((a, b) => b.time - a.time)
  }

  private mill (): void {
    this.milling = this.milling.then(async () => await this.millOnce()).catch(this.onMillError)
  }

  /** lumberjack's millRunOnce: remove backups past the count and age limits, then compress the rest if asked. */
  private async millOnce (): Promise<void> {
    const { maxBackups, maxAgeDays, compress = false } = this.opts
    if (maxBackups <= 0 && maxAgeDays <= 0 && !compress) return
    let list = await this.backups()
    const doomed: string[] = []
    if (maxBackups > 0 && list.length > maxBackups) {
      doomed.push(...list.slice(maxBackups).map(b => b.file))
      list = list.slice(0, maxBackups)
    }
    if (maxAgeDays > 0) {
      const cutoff = this.now() - maxAgeDays * DAY_MS
      doomed.push(...list.filter(b => b.time < cutoff).map(b => b.file))
      list = list.filter(b => b.time >= cutoff)
    }
    for (const f of doomed) {
      await removeIfThere(f)
      if (!f.endsWith('.gz')) await removeIfThere(f + '.gz')
    }
    if (!compress) return
    for (const b of list) {
      if (b.gzipped) continue
      await pipeline(createReadStream(b.file), createGzip(), createWriteStream(b.file + '.gz', { mode: 0o600 }))
      await unlink(b.file)
    }
  }
}

async function removeIfThere (file: string): Promise<void> {
  try { await unlink(file) } catch (err) { if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err }
}
