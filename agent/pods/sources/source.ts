// The contract of a pod source: it reports the whole current set of its pods whenever that set changes.

import type { Pod, PodSource } from '../pod-types.js'

export interface SourceSink {
  /** The complete set of pods this source now holds (replaces what it reported before). */
  set(source: PodSource, pods: Pod[]): void
  /**
   * The mirror pods of this node's static pods as the API server holds them (API source only), each
   * time that set changes: a deleted or stale mirror is made again.
   */
  mirrors?(pods: Pod[]): void
}

export interface SourceLogger {
  warn(o: object, m?: string): void
  info(o: object, m?: string): void
}

export interface PodSourceRunner {
  start(): void
  /** Reads once now (used at start-up and by tests); resolves after the sink saw the result. */
  refresh(): Promise<void>
  stop(): void
}
