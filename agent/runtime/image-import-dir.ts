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
}

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
        } catch (err) {
          o.logger.warn({ path, err: (err as Error).message }, 'image layout import failed')
        }
      }
    } finally { busy = false }
  }
  const timer = setInterval(() => { void scan() }, o.checkFrequencyMs)
  timer.unref()
  return { scan, stop: () => clearInterval(timer) }
}
