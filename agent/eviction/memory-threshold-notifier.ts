// The memory thresholds watched by kernel memcg notifications (kernelMemcgNotification): one per memory threshold, re-armed from current figures.

import { quantityOf, SIGNAL_RESOURCE, type Threshold, isHard } from './thresholds.js'
import type { MemcgNotifier, MemcgNotifierDeps } from './memcg-notifier.js'

/** A memory cgroup's figures: what its capacity is, what it uses (memory.usage_in_bytes) and its working set. */
export interface MemcgFigures { capacity: number, usage: number, workingSet: number }

/**
 * The usage_in_bytes threshold (the kubelet's UpdateThreshold): capacity less the eviction threshold, plus the
 * inactive file pages (usage less working set), so the kernel signals when the working set reaches capacity less
 * the threshold.
 */
export function memcgThreshold (t: Threshold, f: MemcgFigures): number {
  return f.capacity - quantityOf(t.value, f.capacity) + Math.max(0, f.usage - f.workingSet)
}

/** The kubelet's notifier description: "hard memory eviction threshold", "soft allocatable memory eviction threshold". */
export function describeThreshold (t: Threshold): string {
  return `${isHard(t) ? 'hard' : 'soft'} ${t.signal === 'allocatableMemory.available' ? 'allocatable ' : ''}memory eviction threshold`
}

/** What the eviction manager asks of its memory notifier. */
export interface MemoryNotifier {
  /** `onCrossed` runs on every kernel notification with the kubelet's message ("eviction manager: ... crossed"). */
  start(onCrossed: (message: string) => void): void
  /** Computes every threshold from current figures and (re-)arms the notifications (each round, at most every 10 s). */
  refresh(): void
  /** True while every memory.available threshold is watched by the kernel: polling that signal is then unneeded. */
  watching(): boolean
  /** Stops every helper and waits for them to exit. */
  stop(): Promise<void>
}

export interface MemoryNotifierDeps {
  thresholds: readonly Threshold[]
  /** The root memory cgroup's cgroup v1 directory (/sys/fs/cgroup/memory); undefined without one (cgroup v2). */
  rootMemcgDir?: string
  /** The pods cgroup's v1 memory directory, for allocatableMemory.available; undefined without one. */
  podsMemcgDir?: string
  nodeFigures(): MemcgFigures | undefined
  podsFigures(): MemcgFigures | undefined
  /** Makes one notifier (createMemcgNotifier; tests inject a fake spawn through it). */
  create(d: MemcgNotifierDeps): MemcgNotifier
  logger: { info(o: object, m?: string): void, warn(o: object, m?: string): void }
}

const POLLED = 'eviction manager: the memory signal is polled every second'

export function createMemoryNotifier (d: MemoryNotifierDeps): MemoryNotifier {
  /** `worked`: its helper was armed once, so a later failure (the helper killed, say by the OOM killer) is retried. */
  interface Watch { threshold: Threshold, allocatable: boolean, dir: string, notifier: MemcgNotifier, failed: boolean, worked: boolean }
  const watches: Watch[] = []
  let onCrossed: ((message: string) => void) | undefined
  let mode: 'unknown' | 'kernel' | 'polling' = 'unknown'

  /** Logs which way memory thresholds are seen, once per change. */
  function report (next: 'kernel' | 'polling', detail: object): void {
    if (mode === next) return
    const was = mode
    mode = next
    if (next === 'kernel') d.logger.info(detail, 'eviction manager: memory thresholds are watched by the kernel\'s memcg notification (python3 helper)')
    else if (was === 'unknown') d.logger.info(detail, `${POLLED}: the kernel's memcg notification is not available here`)
    else d.logger.warn(detail, `${POLLED}: the kernel's memcg notification stopped`)
  }

  function notifierFor (w: Watch): MemcgNotifier {
    const description = describeThreshold(w.threshold)
    const notifier = d.create({
      cgroupDir: w.dir,
      onCrossed: () => onCrossed?.(`eviction manager: ${description} crossed`),
      onArmed: () => {
        w.worked = true
        if (watchingNode()) report('kernel', { cgroup: d.rootMemcgDir, helpers: watches.map(x => x.notifier.pid()) })
      },
      onFailed: reason => {
        if (w.notifier !== notifier) return
        w.failed = true
        if (w.allocatable) d.logger.warn({ threshold: description, reason }, 'eviction manager: memory threshold notifier failed; the threshold is checked every round')
        else report('polling', { threshold: description, reason })
      }
    })
    return notifier
  }

  function watchingNode (): boolean {
    const node = watches.filter(w => !w.allocatable)
    return node.length > 0 && node.every(w => !w.failed && w.notifier.armed())
  }

  const memory = d.thresholds.filter(t => SIGNAL_RESOURCE[t.signal] === 'memory')
  return {
    start (handler) {
      onCrossed = handler
      if (memory.length === 0) return
      if (d.rootMemcgDir === undefined) {
        report('polling', { reason: 'no cgroup v1 memory controller (cgroup v2 has no cgroup.event_control)' })
        return
      }
      for (const t of memory) {
        const allocatable = t.signal === 'allocatableMemory.available'
        const dir = allocatable ? d.podsMemcgDir : d.rootMemcgDir
        if (dir === undefined) {
          d.logger.info({ threshold: describeThreshold(t) }, 'eviction manager: no pods memory cgroup to watch; the threshold is checked every round')
          continue
        }
        const w = { threshold: t, allocatable, dir, failed: false, worked: false } as Watch
        w.notifier = notifierFor(w)
        watches.push(w)
      }
    },
    refresh () {
      const node = d.nodeFigures()
      const pods = d.podsFigures()
      for (const w of watches) {
        const f = w.allocatable ? pods : node
        if (f === undefined) continue
        if (w.failed) {
          // As the kubelet makes its notifiers anew at each update: one that worked is started again.
          if (!w.worked) continue
          d.logger.info({ threshold: describeThreshold(w.threshold) }, 'eviction manager: restarting the memory threshold notifier')
          w.failed = false
          w.worked = false
          w.notifier = notifierFor(w)
        }
        w.notifier.set(memcgThreshold(w.threshold, f))
      }
    },
    watching: watchingNode,
    async stop () {
      await Promise.all(watches.map(async w => await w.notifier.stop()))
    }
  }
}
