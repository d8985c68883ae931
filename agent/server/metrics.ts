// The pod manager's metric snapshots (gauges, counters, histograms); exposed through prom-client (agent/metrics/).

export const PROMETHEUS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8'

/** Seconds; Prometheus client_golang's DefBuckets, which the kubelet's duration histograms use. */
export const DEFAULT_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

export interface HistogramSnapshot { buckets: number[]; counts: number[]; sum: number; count: number }

export interface Histogram {
  observe(value: number): void
  snapshot(): HistogramSnapshot
}

export function createHistogram (buckets: number[] = DEFAULT_BUCKETS): Histogram {
  const counts = buckets.map(() => 0)
  let sum = 0
  let count = 0
  return {
    observe (value) {
      sum += value
      count++
      const i = buckets.findIndex(b => value <= b)
      if (i >= 0) counts[i]!++
    },
    snapshot: () => ({ buckets: [...buckets], counts: [...counts], sum, count })
  }
}

export interface Sample { labels?: Record<string, string>; value: number }

export type MetricFamily =
  | { name: string; help: string; type: 'gauge' | 'counter'; samples: Sample[] }
  | { name: string; help: string; type: 'histogram'; histogram: HistogramSnapshot }
