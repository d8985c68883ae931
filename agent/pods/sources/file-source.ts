// Static pods from --pod-manifest-path (a file or a folder; dot files ignored), re-read every --file-check-frequency.

import { readdirSync, readFileSync, statSync, watch, type FSWatcher } from 'node:fs'
import { join, basename } from 'node:path'
import { decodeManifest, toStaticPod } from '../manifest.js'
import type { Pod } from '../pod-types.js'
import type { PodSourceRunner, SourceLogger, SourceSink } from './source.js'

export interface FileSourceOptions {
  path: string
  nodeName: string
  checkFrequencyMs: number
  sink: SourceSink
  logger: SourceLogger
}

function manifestFiles (path: string): string[] {
  let stat
  try { stat = statSync(path) } catch { return [] }
  if (stat.isFile()) return basename(path).startsWith('.') ? [] : [path]
  if (!stat.isDirectory()) return []
  return readdirSync(path)
    .filter(name => !name.startsWith('.'))
    .sort()
    .map(name => join(path, name))
    .filter(file => { try { return statSync(file).isFile() } catch { return false } })
}

export function createFileSource (o: FileSourceOptions): PodSourceRunner {
  let timer: NodeJS.Timeout | undefined
  let watcher: FSWatcher | undefined
  let last: string | undefined
  const badSeen = new Map<string, string>()

  function read (): Pod[] {
    const pods: Pod[] = []
    for (const file of manifestFiles(o.path)) {
      try {
        for (const obj of decodeManifest(readFileSync(file, 'utf8'), file)) pods.push(toStaticPod(obj, 'file', file, o.nodeName))
        badSeen.delete(file)
      } catch (err) {
        const message = (err as Error).message
        // Log a broken file once per distinct error, not on every poll.
        if (badSeen.get(file) !== message) o.logger.warn({ file, err: message }, 'skipping pod manifest')
        badSeen.set(file, message)
      }
    }
    return pods
  }

  async function refresh (): Promise<void> {
    const pods = read()
    const fingerprint = pods.map(p => p.metadata.uid).sort().join(',')
    if (fingerprint === last) return
    last = fingerprint
    o.sink.set('file', pods)
  }

  return {
    start () {
      void refresh()
      timer = setInterval(() => { void refresh() }, o.checkFrequencyMs)
      timer.unref()
      try {
        watcher = watch(o.path, { persistent: false }, () => { void refresh() })
        watcher.on('error', () => { watcher?.close(); watcher = undefined })
      } catch { /* the path may not exist yet; polling covers it */ }
    },
    refresh,
    stop () {
      if (timer !== undefined) clearInterval(timer)
      watcher?.close()
    }
  }
}
