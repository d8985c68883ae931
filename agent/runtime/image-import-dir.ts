// Offline images for appliances: OCI image layouts (folders, .tar, .tar.gz) dropped in a folder are imported.

import { existsSync, readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'
import type { Image } from './runtime.js'

export interface ImageImporter { importImage(path: string): Promise<Image[]> }

export interface ImportDirOptions {
  dir: string
  importer: ImageImporter
  checkFrequencyMs: number
  logger: { info(o: object, m?: string): void; warn(o: object, m?: string): void }
  /** A failed import, once per file version (the orchlet turns it into a Warning Event on its Node). */
  onFailure?: (path: string, message: string) => void
}

/** Failures that are about the disk, not the file: the import is tried again at the next scan. */
const RETRIED = new Set(['ENOSPC', 'EDQUOT', 'EIO'])

export interface ImportDir { scan(): Promise<void>; stop(): void }

function candidates (dir: string): string[] {
  if (!existsSync(dir)) return []
  return readdirSync(dir)
    .filter(name => !name.startsWith('.'))
    .map(name => join(dir, name))
    .filter(path => {
      try {
        const st = statSync(path)
        return st.isDirectory() ? existsSync(join(path, 'oci-layout')) : /\.(tar|tar\.gz|tgz)$/.test(path)
      } catch { return false }
    })
}

/** Scans at start and every period; a file is imported again only when its size or mtime changed. */
export function watchImportDir (o: ImportDirOptions): ImportDir {
  const seen = new Map<string, string>()
  const reported = new Map<string, string>()
  let busy = false
  async function scan (): Promise<void> {
    if (busy) return
    busy = true
    try {
      for (const path of candidates(o.dir)) {
        const st = statSync(path)
        const stamp = `${st.size}:${st.mtimeMs}`
        if (seen.get(path) === stamp) continue
        seen.set(path, stamp)
        try {
          const images = await o.importer.importImage(path)
          o.logger.info({ path, images: images.flatMap(i => i.repoTags) }, 'imported image layout')
          reported.delete(path)
        } catch (err) {
          const message = (err as Error).message
          const code = (err as NodeJS.ErrnoException).code ?? (/\b(ENOSPC|EDQUOT|EIO)\b/.exec(message)?.[1])
          // A full disk may empty again: the file is retried then, without repeating the report.
          if (code !== undefined && RETRIED.has(code)) seen.delete(path)
          if (reported.get(path) === stamp) continue
          reported.set(path, stamp)
          o.logger.warn({ path, err: message }, 'image layout import failed')
          o.onFailure?.(path, code === 'ENOSPC' || code === 'EDQUOT' ? `importing ${path}: no space left on device` : `importing ${path}: ${message}`)
        }
      }
    } finally { busy = false }
  }
  const timer = setInterval(() => { void scan() }, o.checkFrequencyMs)
  timer.unref()
  return { scan, stop: () => clearInterval(timer) }
}
