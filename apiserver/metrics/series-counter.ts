// A counter for per-request hot paths: a caller takes its series and adds to a plain number, where prom-client's
// Counter validates and hashes every label on each increment; the samples are read at scrape time
// (ComponentMetrics.collected) in the same exposition as prom-client's counters.

import type { CollectedSample } from './component-metrics.js'

/** One label set's count. */
export interface CounterSeries {
  inc(): void
}

interface Series extends CounterSeries {
  readonly labels: Record<string, string>
  value: number
}

export class SeriesCounter<L extends string> {
  private readonly series = new Map<string, Series>()

  constructor (private readonly labelNames: readonly L[]) {}

  /**
   * The series of `labels`, made on first use. As prom-client's, samples come out in the order series were made,
   * each with its labels in the order of the object that made it.
   */
  seriesFor (labels: Record<L, string>): CounterSeries {
    const key = this.labelNames.map(n => labels[n]).join('\u0000')
    let s = this.series.get(key)
    if (s === undefined) {
      const made: Series = {
        labels: { ...labels },
        value: 0,
        inc () { made.value++ }
      }
      s = made
      this.series.set(key, s)
    }
    return s
  }

  samples (): CollectedSample[] {
    return [...this.series.values()].map(s => ({ labels: s.labels, value: s.value }))
  }
}
