import { EtcdClient } from '../apiserver/storage/etcd/etcd-client.js'
import { startTestEtcd } from '../apiserver/storage/etcd/etcd-for-tests.js'
const cluster = startTestEtcd(3)
if ('skip' in cluster) throw new Error('skip')
try {
  for (const ep of [0, 1, 2]) {
    const client = new EtcdClient({ endpoints: [cluster.endpoints[ep]] })
    await client.call('KV', 'Put', { key: Buffer.from('warm'), value: Buffer.from('x') })
    let inversions = 0; let total = 0
    for (let round = 0; round < 30; round++) {
      const revs = await Promise.all(Array.from({ length: 16 }, (_, i) => client.call('KV', 'Put', { key: Buffer.from(`/o/${round}/${i}`), value: Buffer.from('x') }).then(r => r.header.revision as number)))
      for (let i = 1; i < revs.length; i++) { total++; if (revs[i] < revs[i - 1]) inversions++ }
    }
    console.log(`endpoint ${ep}: adjacent inversions ${inversions}/${total}`)
    client.close()
  }
} finally { cluster.stop() }
