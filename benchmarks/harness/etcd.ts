// A private etcd cluster for the length of a harness run (the tests' .ci/etcd.sh), stopped however the run ends.

import { startTestEtcd, type TestEtcdCluster } from '../../apiserver/storage/etcd/etcd-for-tests.js'

/** Runs `main` with a cluster of `members` started for it, or with none when `members` is 0. */
export async function withRunEtcd (members: number, main: (cluster: TestEtcdCluster | undefined) => Promise<void>): Promise<void> {
  let cluster: TestEtcdCluster | undefined
  if (members > 0) {
    const started = startTestEtcd(members)
    if ('skip' in started) throw new Error(started.skip)
    cluster = started
    // Interrupted runs stop the cluster too.
    for (const sig of ['SIGINT', 'SIGTERM'] as const) process.once(sig, () => { cluster?.stop(); process.exit(130) })
  }
  try {
    await main(cluster)
  } finally {
    cluster?.stop()
  }
}
