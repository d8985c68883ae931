// Container log rotation as the kubelet's container log manager: a running container's log past --container-log-max-size
// is renamed with a timestamp and reopened; older rotated files are gzipped; at most --container-log-max-files are kept.

import { copyFileSync, existsSync, readdirSync, readFileSync, renameSync, statSync, truncateSync, unlinkSync, writeFileSync } from 'node:fs'
import { basename, dirname, join } from 'node:path'
import { gzipSync } from 'node:zlib'
import type { ContainerRuntime } from '../runtime/runtime.js'

export interface LogRotationDeps {
  runtimes(): ContainerRuntime[]
  maxSizeBytes: number
  /** Files kept per container, the live one included (at least 2). */
  maxFiles: number
  now(): number
  logger: { info(o: object, m?: string): void, warn(o: object, m?: string): void }
}

/** The kubelet's rotated suffix: `.20060102-150405` in UTC. */
export function rotationSuffix (ms: number): string {
  const d = new Date(ms).toISOString()
  return `.${d.slice(0, 4)}${d.slice(5, 7)}${d.slice(8, 10)}-${d.slice(11, 13)}${d.slice(14, 16)}${d.slice(17, 19)}`
}

/** The rotated files of `log`, oldest first (their suffixes sort by time). */
function rotatedOf (log: string): string[] {
  const base = basename(log)
  return readdirSync(dirname(log)).filter(f => f.startsWith(base + '.') && !f.endsWith('.tmp')).sort().map(f => join(dirname(log), f))
}

export interface LogRotator {
  /** One pass over the running containers; resolves with the number of logs rotated. */
  rotateAll(): Promise<number>
  /** Rotates one container's log when it is over the size. */
  rotate(rt: ContainerRuntime, containerId: string, logPath: string): Promise<boolean>
}

export function createLogRotator (d: LogRotationDeps): LogRotator {
  async function rotate (rt: ContainerRuntime, id: string, log: string): Promise<boolean> {
    if (log === '' || !existsSync(log) || statSync(log).size < d.maxSizeBytes) return false
    // Room for the file about to be rotated: the live log plus maxFiles - 1 rotated ones.
    const rotated = rotatedOf(log)
    for (const old of rotated.slice(0, Math.max(0, rotated.length - (d.maxFiles - 2)))) unlinkSync(old)
    // All but the newest rotated file are compressed (the newest may still be read by `logs` followers).
    const kept = rotatedOf(log)
    for (const f of kept.slice(0, -1)) {
      if (f.endsWith('.gz')) continue
      writeFileSync(f + '.gz', gzipSync(readFileSync(f)))
      unlinkSync(f)
    }
    const target = log + rotationSuffix(d.now())
    if (rt.runtime.reopenContainerLog !== undefined) {
      renameSync(log, target)
      try {
        await rt.runtime.reopenContainerLog(id)
      } catch (err) {
        // As the kubelet: without a reopened log the container would write to the rotated file; put it back.
        renameSync(target, log)
        throw err
      }
    } else {
      // The runtime appends to its open file (O_APPEND): copy, then truncate, keeps its writes in the live log.
      copyFileSync(log, target)
      truncateSync(log, 0)
    }
    d.logger.info({ container: id, rotated: target }, 'rotated container log')
    return true
  }

  return {
    rotate,
    async rotateAll () {
      let n = 0
      for (const rt of d.runtimes()) {
        for (const c of await rt.runtime.listContainers({ state: 'CONTAINER_RUNNING' }).catch(() => [])) {
          try {
            const st = await rt.runtime.containerStatus(c.id)
            if (await rotate(rt, c.id, st.logPath)) n++
          } catch (err) {
            d.logger.warn({ container: c.id, err: (err as Error).message }, 'rotating a container log failed')
          }
        }
      }
      return n
    }
  }
}
