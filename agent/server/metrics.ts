// Prometheus text exposition (format 0.0.4) for the orchlet's /metrics: gauges, counters and histograms.

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

function escapeLabel (v: string): string { return v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"') }

function labelText (labels: Record<string, string> | undefined): string {
  const entries = Object.entries(labels ?? {})
  return entries.length === 0 ? '' : `{${entries.map(([k, v]) => `${k}="${escapeLabel(v)}"`).join(',')}}`
}

function num (v: number): string {
  if (Number.isNaN(v)) return 'NaN'
  if (v === Infinity) return '+Inf'
  if (v === -Infinity) return '-Inf'
  return String(v)
}

/** One `# HELP` and `# TYPE` per family, then its samples; histogram buckets are cumulative and end with +Inf. */
export function renderPrometheus (families: MetricFamily[]): string {
  const lines: string[] = []
  for (const f of families) {
    lines.push(`# HELP ${f.name} ${f.help.replace(/\\/g, '\\\\').replace(/\n/g, '\\n')}`, `# TYPE ${f.name} ${f.type}`)
    if (f.type === 'histogram') {
      let cumulative = 0
      f.histogram.buckets.forEach((b, i) => {
        cumulative += f.histogram.counts[i] ?? 0
        lines.push(`${f.name}_bucket{le="${num(b)}"} ${cumulative}`)
      })
      lines.push(`${f.name}_bucket{le="+Inf"} ${f.histogram.count}`, `${f.name}_sum ${num(f.histogram.sum)}`, `${f.name}_count ${f.histogram.count}`)
    } else {
      for (const s of f.samples) lines.push(`${f.name}${labelText(s.labels)} ${num(s.value)}`)
    }
  }
  return lines.join('\n') + '\n'
}
