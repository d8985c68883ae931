// The pod's ephemeral storage total on a real directory tree: containers, volumes, the pod's own log files and etc-hosts.
import t, { type Test } from 'tap'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { randomUUID } from 'node:crypto'
import { diskUsage } from '../node/disk-usage.js'
import { podLogDir } from '../pods/container-config.js'
import type { Pod } from '../pods/pod-types.js'
import { podEphemeralBytes, podEtcHostsBytes, podLogFilesBytes, type StorageSources } from './pod-storage-stats.js'

const Ki = 1024

function setUp (t: Test): { s: StorageSources, pod: Pod } {
  const root = mkdtempSync(join(tmpdir(), 'orch-pod-storage-'))
  t.teardown(() => rmSync(root, { recursive: true, force: true }))
  const s: StorageSources = { rootDir: join(root, 'orchlet'), logsRoot: join(root, 'logs'), diskUsage }
  const pod: Pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web', namespace: 'default', uid: randomUUID() }, spec: { containers: [{ name: 'app', image: 'img' }], volumes: [{ name: 'cache', emptyDir: {} }, { name: 'mem', emptyDir: { medium: 'Memory' } }] } }
  return { s, pod }
}

t.test('the pod log directory counts its own files, not its containers\' folders', async t => {
  const { s, pod } = setUp(t)
  t.equal(await podLogFilesBytes(s, pod), undefined, 'no log directory yet')
  const dir = podLogDir(s.logsRoot, pod)
  mkdirSync(join(dir, 'app'), { recursive: true })
  writeFileSync(join(dir, 'app', '0.log'), Buffer.alloc(64 * Ki, 1))
  t.equal(await podLogFilesBytes(s, pod), 0, 'a container\'s logs are its own figure')
  writeFileSync(join(dir, 'pod.log'), Buffer.alloc(16 * Ki, 1))
  const one = await podLogFilesBytes(s, pod)
  t.ok(one !== undefined && one >= 16 * Ki && one < 64 * Ki, `one 16Ki file on disk (${one})`)
})

t.test('the etc-hosts file under the pod directory counts when it exists', async t => {
  const { s, pod } = setUp(t)
  t.equal(await podEtcHostsBytes(s, pod), undefined)
  mkdirSync(join(s.rootDir, 'pods', pod.metadata.uid), { recursive: true })
  writeFileSync(join(s.rootDir, 'pods', pod.metadata.uid, 'etc-hosts'), Buffer.alloc(8 * Ki, 0x61))
  const hosts = await podEtcHostsBytes(s, pod)
  t.ok(hosts !== undefined && hosts >= 8 * Ki, `blocks on disk (${hosts})`)
})

t.test('the total: containers\' layers and logs, disk-backed ephemeral volumes, pod log files and etc-hosts', async t => {
  const { pod } = setUp(t)
  const containers = [{ rootfsBytes: 100, logsBytes: 10 }, { logsBytes: 1 }]
  const volumes = [{ name: 'cache', usedBytes: 1000 }, { name: 'mem', usedBytes: 50_000 }]
  t.equal(podEphemeralBytes(pod, containers, volumes), 1111, 'a memory-backed emptyDir is not local storage')
  t.equal(podEphemeralBytes(pod, containers, volumes, { podLogsBytes: 20_000, etcHostsBytes: 4096 }), 1111 + 20_000 + 4096)
})
