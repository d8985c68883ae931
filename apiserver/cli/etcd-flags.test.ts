// The etcd flags: absent means LMDB; URLs checked; TLS pairs; the compaction interval as a duration.
import t from 'tap'
import { parseFlags, UsageError } from './args.js'
import { ETCD_FLAGS, etcdOptions } from './etcd-flags.js'

const parse = (...args: string[]) => etcdOptions(parseFlags(args, ETCD_FLAGS).flags)

t.test('without --etcd-servers the store stays LMDB', async t => {
  t.equal(parse(), undefined)
  t.equal(parse('--etcd-prefix', '/x'), undefined)
})

t.test('servers, prefix, TLS files and the compaction interval are read as kube-apiserver names them', async t => {
  t.same(parse('--etcd-servers', 'http://127.0.0.1:2379/, https://h:2379', '--etcd-prefix', '/orch', '--etcd-cafile', 'ca.pem',
    '--etcd-certfile', 'c.pem', '--etcd-keyfile', 'k.pem', '--etcd-compaction-interval', '90s'), {
    servers: ['http://127.0.0.1:2379', 'https://h:2379'], prefix: '/orch', caFile: 'ca.pem', certFile: 'c.pem', keyFile: 'k.pem', compactionIntervalMs: 90_000
  })
  t.equal(parse('--etcd-servers', 'http://a:1')?.compactionIntervalMs, 300_000, 'every 5 minutes by default')
  t.equal(parse('--etcd-servers', 'http://a:1')?.prefix, '/registry')
  t.equal(parse('--etcd-servers', 'http://a:1', '--etcd-compaction-interval', '0')?.compactionIntervalMs, 0, '0 turns it off')
})

t.test('bad values are usage errors', async t => {
  t.throws(() => parse('--etcd-servers', '127.0.0.1:2379'), UsageError, 'a URL without scheme')
  t.throws(() => parse('--etcd-servers', 'http://a:1', '--etcd-certfile', 'c.pem'), UsageError, 'a certificate without key')
  t.throws(() => parse('--etcd-servers', 'http://a:1', '--etcd-compaction-interval', 'soon'), UsageError)
})
