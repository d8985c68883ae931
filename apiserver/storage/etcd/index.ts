// The etcd storage backend's public surface.
export { EtcdStore, type EtcdStoreOptions } from './etcd-store.js'
export type { EtcdTls } from './etcd-client.js'
