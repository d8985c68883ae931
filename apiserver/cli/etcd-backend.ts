// Opens the etcd store for `orch up` / `orch apiserver` with its periodic compaction, closed together.
import type { Logger } from 'pino'
import { startCompactor } from '../storage/etcd/compactor.js'
import { EtcdStore } from '../storage/etcd/index.js'
import type { Store } from '../storage/store.js'
import { CachedStore } from '../storage/cacher/cached-store.js'
import type { EtcdOptions } from './etcd-flags.js'
import type { Egress } from '../egress/egress.js'
import { startForwarder, type Forwarder } from '../egress/forwarder.js'

/** The loopback forwarders through which each endpoint is dialled when the `etcd` egress selection is not direct. */
async function egressRoutes (endpoints: string[], egress: Egress | undefined, log: Logger): Promise<{ route?: (e: string) => { target: string, serverName?: string } | undefined, close(): Promise<void> }> {
  if (egress === undefined || egress.direct('etcd')) return { close: async () => {} }
  const routes = new Map<string, { target: string, serverName?: string }>()
  const forwarders: Forwarder[] = []
  for (const e of endpoints) {
    const u = new URL(e)
    const host = u.hostname.replace(/^\[|\]$/g, '')
    const port = Number(u.port === '' ? 2379 : u.port)
    const f = await startForwarder(async () => await egress.tunnel('etcd', host, port), err => log.warn({ endpoint: e, err: err.message }, 'etcd egress tunnel failed'))
    forwarders.push(f)
    routes.set(e, { target: f.address, serverName: host })
  }
  log.info({ via: egress.describe('etcd') }, 'etcd traffic leaves through the egress selection')
  return { route: e => routes.get(e), close: async () => { await Promise.all(forwarders.map(async f => await f.close())) } }
}

/**
 * The etcd store behind its watch cache (LISTs at resourceVersion "0" and NotOlderThan from memory, and consistent ones
 * too with the ConsistentListFromCache gate).
 */
export async function openEtcdBackend (o: EtcdOptions, logger: Logger, egress?: Egress, gates: { consistentListFromCache?: boolean } = {}): Promise<Store> {
  const log = logger.child({ component: 'etcd' })
  const routes = await egressRoutes(o.servers, egress, log)
  const store = await EtcdStore.open({
    route: routes.route,
    endpoints: o.servers,
    prefix: o.prefix,
    tls: { caFile: o.caFile, certFile: o.certFile, keyFile: o.keyFile },
    log: msg => log.warn(msg)
  }).catch(async (err: unknown) => { await routes.close(); throw err })
  const stopCompactor = startCompactor(store, o.compactionIntervalMs, err => log.warn({ err }, 'etcd compaction failed'))
  log.info({ endpoints: o.servers, prefix: o.prefix, revision: store.currentRevision() }, 'storing in etcd')
  const cached = new CachedStore(store, { consistentListFromCache: gates.consistentListFromCache === true, log: msg => log.warn(msg) })
  const close = cached.close.bind(cached)
  cached.close = async () => { stopCompactor(); await close(); await routes.close() }
  return cached
}
