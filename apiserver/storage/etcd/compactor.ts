// Periodic compaction of etcd, as kube-apiserver does it: every interval, compact to the revision seen one interval ago.
import type { Revision } from '../store.js'

export interface CompactTarget {
  currentRevision(): Revision
  compact(revision: Revision): Promise<void>
}

/**
 * Keeps at least one interval of history (so watches and continue tokens younger than that still work): at each tick
 * it compacts to the revision recorded at the tick before. Several API servers may each run one; compacting to a
 * revision at or below the last compaction is a no-op in the store. Returns a stop function.
 */
export function startCompactor (store: CompactTarget, intervalMs: number, onError: (err: unknown) => void): () => void {
  if (intervalMs <= 0) return () => {}
  let previous: Revision = store.currentRevision()
  let running = false
  const timer = setInterval(() => {
    if (running) return
    running = true
    const target = previous
    previous = store.currentRevision()
    store.compact(target).catch(onError).finally(() => { running = false })
  }, intervalMs)
  timer.unref()
  return () => clearInterval(timer)
}
