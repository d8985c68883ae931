// Opens the etcd store for `orch up` / `orch apiserver` with its periodic compaction, closed together.
import type { Logger } from 'pino'
import { startCompactor } from '../storage/etcd/compactor.js'
import { EtcdStore } from '../storage/etcd/index.js'
import type { Store } from '../storage/store.js'
import type { EtcdOptions } from './etcd-flags.js'

export async function openEtcdBackend (o: EtcdOptions, logger: Logger): Promise<Store> {
  const log = logger.child({ component: 'etcd' })
  const store = await EtcdStore.open({
    endpoints: o.servers,
    prefix: o.prefix,
    tls: { caFile: o.caFile, certFile: o.certFile, keyFile: o.keyFile },
    log: msg => log.warn(msg)
  })
  const stopCompactor = startCompactor(store, o.compactionIntervalMs, err => log.warn({ err }, 'etcd compaction failed'))
  log.info({ endpoints: o.servers, prefix: o.prefix, revision: store.currentRevision() }, 'storing in etcd')
  const close = store.close.bind(store)
  store.close = async () => { stopCompactor(); await close() }
  return store
}
