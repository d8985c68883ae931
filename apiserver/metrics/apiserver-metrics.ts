// The API server's metric set, with kube-apiserver's names, labels, buckets and stability levels.

import type { Counter, Gauge, Histogram } from 'prom-client'
import { ComponentMetrics, exponentialBuckets, type ComponentMetricsOptions } from './component-metrics.js'
import { SeriesHistogram } from './series-histogram.js'

/** The request latency buckets of apiserver_request_duration_seconds and etcd_request_duration_seconds. */
export const REQUEST_BUCKETS = [0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 45, 60]

type RequestLabel = 'verb' | 'dry_run' | 'group' | 'version' | 'resource' | 'subresource' | 'scope' | 'component'
type LongRunningLabel = 'verb' | 'group' | 'version' | 'resource' | 'subresource' | 'scope' | 'component'
type WatchLabel = 'group' | 'version' | 'kind'

export class ApiServerMetrics {
  readonly requests: Counter<RequestLabel | 'code'>
  readonly requestDuration: Histogram<RequestLabel>
  readonly longRunning: Gauge<LongRunningLabel>
  readonly registeredWatchers: Gauge<WatchLabel>
  /** apiserver_watch_events_sizes, and apiserver_watch_events_total as its counts: observed per event per watcher. */
  readonly watchEventSizes = new SeriesHistogram<WatchLabel>(['group', 'version', 'kind'], exponentialBuckets(1024, 2.0, 8))
  /** etcd_request_duration_seconds: a series histogram, as several storage calls of every write observe into it. */
  readonly storageRequests = new SeriesHistogram<'operation' | 'type'>(['operation', 'type'], REQUEST_BUCKETS)
  readonly storageObjects: Gauge<'resource'>
  /** Size of the store's database file, under its three names across releases (1.28 and 1.29 deprecated two). */
  readonly dbSize: { etcd: Gauge<'endpoint'>, storageDb: Gauge<'endpoint'>, storageSize: Gauge<'storage_cluster_id'> }

  constructor (readonly base: ComponentMetrics) {
    const m = base
    const req = ['verb', 'dry_run', 'group', 'version', 'resource', 'subresource', 'scope', 'component'] as const
    this.requests = m.counter({
      name: 'apiserver_request_total', stabilityLevel: 'STABLE', labelNames: [...req, 'code'],
      help: 'Counter of apiserver requests broken out for each verb, dry run value, group, version, resource, scope, component, and HTTP response code.'
    })
    this.requestDuration = m.histogram({
      name: 'apiserver_request_duration_seconds', stabilityLevel: 'STABLE', labelNames: req, buckets: REQUEST_BUCKETS,
      help: 'Response latency distribution in seconds for each verb, dry run value, group, version, resource, subresource, scope and component.'
    })
    this.longRunning = m.gauge({
      name: 'apiserver_longrunning_requests', stabilityLevel: 'STABLE',
      labelNames: ['verb', 'group', 'version', 'resource', 'subresource', 'scope', 'component'],
      help: 'Gauge of all active long-running apiserver requests broken out by verb, group, version, resource, scope and component. Not all requests are tracked this way.'
    })
    const marks = this.inflightMarks
    m.gauge({
      name: 'apiserver_current_inflight_requests', stabilityLevel: 'STABLE', labelNames: ['request_kind'],
      help: 'Maximal number of currently used inflight request limit of this apiserver per request kind in last second.',
      collect () {
        const now = Date.now()
        for (const [kind, w] of Object.entries(marks)) this.set({ request_kind: kind }, now - w.since < 1000 ? w.max : w.current)
      }
    })
    const watch = ['group', 'version', 'kind'] as const
    this.registeredWatchers = m.gauge({ name: 'apiserver_registered_watchers', labelNames: watch, help: 'Number of currently registered watchers for a given resources' })
    const sizes = this.watchEventSizes
    m.collected({ name: 'apiserver_watch_events_total', type: 'counter', help: 'Number of events sent in watch clients', read: () => sizes.counts() })
    m.collected({ name: 'apiserver_watch_events_sizes', type: 'histogram', help: 'Watch event size distribution in bytes', read: () => sizes.samples() })
    const storage = this.storageRequests
    m.collected({
      name: 'etcd_request_duration_seconds', type: 'histogram', read: () => storage.samples(),
      help: 'Etcd request latency in seconds for each operation and object type.'
    })
    this.storageObjects = m.gauge({
      name: 'apiserver_storage_objects', stabilityLevel: 'STABLE', labelNames: ['resource'],
      help: 'Number of stored objects at the time of last check split by kind.'
    })
    this.dbSize = {
      etcd: m.gauge({ name: 'etcd_db_total_size_in_bytes', labelNames: ['endpoint'], deprecatedVersion: '1.28', help: 'Total size of the etcd database file physically allocated in bytes.' }),
      storageDb: m.gauge({ name: 'apiserver_storage_db_total_size_in_bytes', labelNames: ['endpoint'], deprecatedVersion: '1.29', help: 'Total size of the storage database file physically allocated in bytes.' }),
      storageSize: m.gauge({ name: 'apiserver_storage_size_bytes', labelNames: ['storage_cluster_id'], help: 'Size of the storage database file physically allocated in bytes.' })
    }
  }

  /** Runs `hook` before each scrape (gauges read from elsewhere: stored objects, database size). */
  onScrape (hook: () => void | Promise<void>): void { this.base.onScrape(hook) }

  async text (): Promise<string> { return await this.base.text() }

  private readonly inflightMarks = { readOnly: { since: 0, max: 0, current: 0 }, mutating: { since: 0, max: 0, current: 0 } }

  /** Requests in flight of one kind changed to `n`: kept as the highest value of the current one-second window. */
  inflightChanged (kind: 'readOnly' | 'mutating', n: number, nowMs = Date.now()): void {
    const w = this.inflightMarks[kind]
    if (nowMs - w.since >= 1000) { w.since = nowMs; w.max = n } else w.max = Math.max(w.max, n)
    w.current = n
  }

  /** A watch was opened on `kind`: counts it as registered until the returned function is called. */
  watchOpened (w: { group: string, version: string, kind: string }): { sent(events: readonly Buffer[]): void, closed(): void } {
    this.registeredWatchers.inc(w)
    let open = true
    const sizes = this.watchEventSizes.seriesFor(w)
    return {
      sent: events => { for (const e of events) sizes.observe(e.length) },
      closed: () => { if (open) { open = false; this.registeredWatchers.dec(w) } }
    }
  }

  static create (o: ComponentMetricsOptions): ApiServerMetrics { return new ApiServerMetrics(new ComponentMetrics(o)) }
}
