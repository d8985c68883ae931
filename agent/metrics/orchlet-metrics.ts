// The orchlet's metrics under the kubelet's names: /metrics (runtime operations, pod start latency, evictions, the pod
// manager's gauges), /metrics/probes (prober_probe_total); each endpoint has its own registry, as the kubelet's.

import type { Counter, Histogram } from 'prom-client'
import { ComponentMetrics, exponentialBuckets, type CollectedSample } from '../../apiserver/metrics/component-metrics.js'
import type { MetricFamily } from '../server/metrics.js'

export const KUBELET_VERSION = '1.29'

const POD_START_BUCKETS = [0.5, 1, 2, 3, 4, 5, 6, 8, 10, 20, 30, 45, 60, 120, 180, 240, 300, 360, 480, 600, 900, 1200, 1800, 2700, 3600]

export interface ProbeResult { kind: 'startup' | 'liveness' | 'readiness', ok: boolean, container: string, pod: string, namespace: string, podUid: string }

/** A pod manager family's samples in prom-client's shape (histograms as cumulative `_bucket`, `_sum`, `_count`). */
function familySamples (f: MetricFamily): CollectedSample[] {
  if (f.type !== 'histogram') return f.samples.map(s => ({ labels: s.labels, value: s.value }))
  const out: CollectedSample[] = []
  let cumulative = 0
  f.histogram.buckets.forEach((b, i) => {
    cumulative += f.histogram.counts[i] ?? 0
    out.push({ suffix: '_bucket', labels: { le: String(b) }, value: cumulative })
  })
  out.push({ suffix: '_bucket', labels: { le: '+Inf' }, value: f.histogram.count }, { suffix: '_sum', value: f.histogram.sum }, { suffix: '_count', value: f.histogram.count })
  return out
}

export class OrchletMetrics {
  /** /metrics, with process and Node.js runtime metrics. */
  readonly main: ComponentMetrics
  /** /metrics/probes. */
  readonly probes: ComponentMetrics
  private readonly runtimeOps: Counter<'operation_type'>
  private readonly runtimeDuration: Histogram<'operation_type'>
  private readonly runtimeErrors: Counter<'operation_type'>
  private readonly podStart: Histogram
  private readonly evictions: Counter<'eviction_signal'>
  private readonly probeTotal: Counter<'probe_type' | 'result' | 'container' | 'pod' | 'namespace' | 'pod_uid'>

  constructor (o: { showHiddenMetricsForVersion?: string } = {}) {
    this.main = new ComponentMetrics({ version: KUBELET_VERSION, showHiddenMetricsForVersion: o.showHiddenMetricsForVersion })
    this.probes = new ComponentMetrics({ version: KUBELET_VERSION, showHiddenMetricsForVersion: o.showHiddenMetricsForVersion, processMetrics: false })
    const m = this.main
    const op = ['operation_type'] as const
    this.runtimeOps = m.counter({ name: 'kubelet_runtime_operations_total', labelNames: op, help: 'Cumulative number of runtime operations by operation type.' })
    this.runtimeDuration = m.histogram({
      name: 'kubelet_runtime_operations_duration_seconds', labelNames: op, buckets: exponentialBuckets(0.005, 2.5, 14),
      help: 'Duration in seconds of runtime operations. Broken down by operation type.'
    })
    this.runtimeErrors = m.counter({ name: 'kubelet_runtime_operations_errors_total', labelNames: op, help: 'Cumulative number of runtime operation errors by operation type.' })
    this.podStart = m.histogram({
      name: 'kubelet_pod_start_duration_seconds', buckets: POD_START_BUCKETS,
      help: 'Duration in seconds from kubelet seeing a pod for the first time to the pod starting to run'
    })
    this.evictions = m.counter({ name: 'kubelet_evictions', labelNames: ['eviction_signal'], help: 'Cumulative number of pod evictions by eviction signal' })
    this.probeTotal = this.probes.counter({
      name: 'prober_probe_total', labelNames: ['probe_type', 'result', 'container', 'pod', 'namespace', 'pod_uid'],
      help: 'Cumulative number of a liveness, readiness or startup probe for a container by result.'
    })
  }

  /** One CRI call (`run_podsandbox`, `container_stats`, ...) took `seconds`; `failed`: it answered an error. */
  runtimeOperation (operation: string, seconds: number, failed: boolean): void {
    this.runtimeOps.inc({ operation_type: operation })
    this.runtimeDuration.observe({ operation_type: operation }, seconds)
    if (failed) this.runtimeErrors.inc({ operation_type: operation })
  }

  podStarted (seconds: number): void { this.podStart.observe(seconds) }

  evicted (signal: string): void { this.evictions.inc({ eviction_signal: signal }) }

  probed (r: ProbeResult): void {
    const type = r.kind === 'liveness' ? 'Liveness' : r.kind === 'readiness' ? 'Readiness' : 'Startup'
    this.probeTotal.inc({ probe_type: type, result: r.ok ? 'successful' : 'failed', container: r.container, pod: r.pod, namespace: r.namespace, pod_uid: r.podUid })
  }

  /** The pod manager's gauges and histograms, read at each scrape, `orchlet_*` under the kubelet's `kubelet_*` names. */
  podManagerFamilies (read: () => MetricFamily[]): void {
    for (const f of read()) {
      const name = f.name.replace(/^orchlet_/, 'kubelet_')
      this.main.collected({ name, help: f.help, type: f.type, read: () => familySamples(read().find(x => x.name === f.name) ?? f) })
    }
  }
}
