// The API server's metrics as `orch up` / `orch apiserver` compose them: the registry, the timed store, stored-object counts.

import { ApiServerMetrics } from '../metrics/apiserver-metrics.js'
import { instrumentStore, resourceOfKey } from '../storage/instrumented-store.js'
import type { Store } from '../storage/store.js'
import type { Registry } from '../registry/types.js'
import { resourcePrefix } from '../registry/keys.js'
import { SERVED_MINOR } from '../endpoints/version.js'

/** The metrics of one API server; a bad --show-hidden-metrics-for-version throws its one-line error. */
export function apiServerMetrics (showHiddenMetricsForVersion: string | undefined): ApiServerMetrics {
  return ApiServerMetrics.create({ version: `1.${SERVED_MINOR}`, showHiddenMetricsForVersion })
}

/** The store with every call timed into etcd_request_duration_seconds. */
export function timedStore (metrics: ApiServerMetrics, store: Store): Store {
  return instrumentStore(store, (operation, type, seconds) => metrics.storageRequests.seriesFor({ operation, type }).observe(seconds))
}

/** apiserver_storage_objects and the database size gauges, read at each scrape. */
export function collectStorageGauges (metrics: ApiServerMetrics, registry: () => Registry | undefined, store: Store): void {
  metrics.onScrape(async () => {
    const bytes = store.space().storeBytes
    metrics.dbSize.etcd.set({ endpoint: store.space().path }, bytes)
    metrics.dbSize.storageDb.set({ endpoint: store.space().path }, bytes)
    metrics.dbSize.storageSize.set({ storage_cluster_id: store.space().path }, bytes)
    const reg = registry()
    if (reg === undefined) return
    const prefixes = new Set(reg.definitions().filter(def => def.virtual !== true).map(def => resourcePrefix(def)))
    for (const prefix of prefixes) metrics.storageObjects.set({ resource: resourceOfKey(prefix) }, await store.count(prefix))
  })
}
