// A histogram for per-event hot paths (watch fan-out): a caller takes its series once and observes into plain numbers,
// where prom-client's Histogram validates and hashes the labels on every observation; the samples are read at scrape
// time (ComponentMetrics.collected) in the same exposition as prom-client's histograms.

import type { CollectedSample } from './component-metrics.js'

/** One label set's counts. */
export interface HistogramSeries {
  observe(value: number): void
}

interface Series extends HistogramSeries {
  readonly labels: Record<string, string>
  /** Observations per bucket (not cumulative); the last slot holds those above every bound. */
  readonly counts: number[]
  sum: number
  count: number
}

export class SeriesHistogram<L extends string> {
  private readonly series = new Map<string, Series>()

  /** `bounds`: the buckets' upper bounds, ascending (+Inf is implied). */
  constructor (private readonly labelNames: readonly L[], private readonly bounds: readonly number[]) {}

  /** The series of `labels`, made on first use; observing into it costs no label lookup. */
  seriesFor (labels: Record<L, string>): HistogramSeries {
    const key = this.labelNames.map(n => labels[n]).join('\u0000')
    let s = this.series.get(key)
    if (s === undefined) {
      const bounds = this.bounds
      const made: Series = {
        labels: Object.fromEntries(this.labelNames.map(n => [n, labels[n]])),
        counts: new Array<number>(bounds.length + 1).fill(0),
        sum: 0,
        count: 0,
        observe (value) {
          let i = 0
          while (i < bounds.length && value > bounds[i]) i++
          made.counts[i]++
          made.sum += value
          made.count++
        }
      }
      s = made
      this.series.set(key, s)
    }
    return s
  }

  /** Each series' number of observations, as a counter's samples. */
  counts (): CollectedSample[] {
    return [...this.series.values()].map(s => ({ labels: s.labels, value: s.count }))
  }

  /** The samples prom-client's Histogram would expose: cumulative `_bucket`s with `le`, then `_sum` and `_count`. */
  samples (): CollectedSample[] {
    const out: CollectedSample[] = []
    for (const s of this.series.values()) {
      let cumulative = 0
      for (const [i, bound] of this.bounds.entries()) {
        cumulative += s.counts[i]
        out.push({ labels: { le: String(bound), ...s.labels }, value: cumulative, suffix: '_bucket' })
      }
      out.push({ labels: { le: '+Inf', ...s.labels }, value: s.count, suffix: '_bucket' })
      out.push({ labels: s.labels, value: s.sum, suffix: '_sum' })
      out.push({ labels: s.labels, value: s.count, suffix: '_count' })
    }
    return out
  }
}
