// The etcd flags of `orch up` / `orch apiserver` (named as kube-apiserver's); without --etcd-servers the store is LMDB.
import { parseDuration, UsageError, type FlagSpec, type Flags } from './args.js'

export const ETCD_FLAGS: FlagSpec[] = [
  { name: 'etcd-servers', kind: 'string', help: 'etcd client URLs (comma-separated) to store in instead of the embedded LMDB store' },
  { name: 'etcd-prefix', kind: 'string', help: 'prefix of every key orch writes in etcd', default: '/registry' },
  { name: 'etcd-cafile', kind: 'string', help: 'CA bundle verifying the etcd servers (TLS)' },
  { name: 'etcd-certfile', kind: 'string', help: 'client certificate presented to etcd (TLS)' },
  { name: 'etcd-keyfile', kind: 'string', help: 'key of --etcd-certfile' },
  { name: 'etcd-compaction-interval', kind: 'duration', help: 'how often etcd history older than one interval is compacted; 0 for never', default: '5m' }
]

export interface EtcdOptions {
  servers: string[]
  prefix: string
  caFile?: string
  certFile?: string
  keyFile?: string
  compactionIntervalMs: number
}

const str = (v: unknown): string | undefined => typeof v === 'string' && v !== '' ? v : undefined

/** The etcd options, or undefined when --etcd-servers is not given (LMDB). */
export function etcdOptions (flags: Flags): EtcdOptions | undefined {
  const servers = str(flags['etcd-servers'])?.split(',').map(s => s.trim()).filter(s => s !== '')
  if (servers === undefined || servers.length === 0) return undefined
  for (const s of servers) {
    if (!/^https?:\/\/[^/]+\/?$/.test(s)) throw new UsageError(`--etcd-servers: "${s}" is not an http:// or https:// URL of host:port`)
  }
  const certFile = str(flags['etcd-certfile'])
  const keyFile = str(flags['etcd-keyfile'])
  if ((certFile === undefined) !== (keyFile === undefined)) throw new UsageError('--etcd-certfile and --etcd-keyfile go together')
  const interval = flags['etcd-compaction-interval'] ?? '5m'
  return {
    servers: servers.map(s => s.replace(/\/$/, '')),
    prefix: str(flags['etcd-prefix']) ?? '/registry',
    caFile: str(flags['etcd-cafile']),
    certFile,
    keyFile,
    compactionIntervalMs: typeof interval === 'number' ? interval : parseDuration('etcd-compaction-interval', String(interval))
  }
}
