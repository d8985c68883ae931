// Load process of the creates harness against etcd itself: COUNT plain Puts of VALUE (the bytes orch stores for one
// create) from CLIENTS concurrent loops over one gRPC channel (the project's etcd client); WARMUP Puts first.
// Env: ENDPOINTS (comma-separated), VALUE, COUNT, CLIENTS, WARMUP, PREFIX.

import { EtcdClient } from '../../apiserver/storage/etcd/etcd-client.js'
import { closedLoop, serve } from './latency.js'

const count = Number(process.env.COUNT ?? 2000)
const clients = Number(process.env.CLIENTS ?? 1)
const warmup = Number(process.env.WARMUP ?? 500)
const value = Buffer.from(process.env.VALUE ?? '')
const prefix = process.env.PREFIX ?? '/raw'
const client = new EtcdClient({ endpoints: process.env.ENDPOINTS!.split(',') })

async function put (key: string): Promise<void> {
  await client.call('KV', 'Put', { key: Buffer.from(key), value })
}

await serve(
  async () => { await closedLoop(warmup, clients, async i => { await put(`${prefix}/warm-${i}`) }) },
  async () => await closedLoop(count, clients, async i => { await put(`${prefix}/${i}`) }),
  async () => { client.close() }
)
