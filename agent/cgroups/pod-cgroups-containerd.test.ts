// Pod cgroups for real: the QoS hierarchy on this machine's cgroup v1, containerd pods placed in their pod cgroup,
// limits the kernel enforces (a container over its memory limit is OOM-killed), node allocatable on the pods cgroup.
import t, { type Test } from 'tap'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { randomUUID } from 'node:crypto'
import { createCriRuntime } from '../runtime/cri/cri-runtime.js'
import { busyboxImage, ensureContainerd } from '../runtime/cri/containerd-for-tests.js'
import { createEventRecorder } from '../events/recorder.js'
import { createBackoff } from '../pods/backoff.js'
import { createPodManager, type PodManager } from '../pods/pod-manager.js'
import { waitForStatus } from '../pods/testing.js'
import type { Pod } from '../pods/pod-types.js'
import { createCgroupfsV1, isCgroupV2 } from './driver.js'
import { createPodCgroups, type PodCgroups } from './pod-cgroups.js'
import { cgroupsForWorkers } from './node-cgroups.js'

const env = await ensureContainerd()
const V1 = '/sys/fs/cgroup'
const quiet = { info () {}, warn () {} }
const Mi = 1024 * 1024

function setup (t: Test, endpoint: string): { pods: PodManager, cgroups: PodCgroups, top: string } {
  const top = `orch-test-${randomUUID().slice(0, 8)}`
  const driver = createCgroupfsV1(V1)
  const cgroups = createPodCgroups({ driver, root: [top], enforce: { memoryBytes: 512 * Mi, cpuMillis: 1500 }, cpuCfsQuota: true, cpuCfsQuotaPeriodUs: 100_000, podPidsLimit: 64, logger: quiet })
  cgroups.setUp()
  const runtime = createCriRuntime({ runtimeEndpoint: endpoint, requestTimeoutMs: 30_000, name: 'containerd' })
  const root = mkdtempSync(join(tmpdir(), 'orch-cg-pods-'))
  const pods = createPodManager({
    nodeName: 'node-cg', maxPods: 10, runtimeFor: () => runtime, rootDir: root, logsRoot: join(root, 'logs'), hostIP: '127.0.0.1',
    cpuCfsQuota: true, cfsPeriodUs: 100_000, backoff: createBackoff({ initialMs: 300, maxMs: 1200, now: Date.now }), now: Date.now, logger: quiet, relistMs: 100,
    recorder: createEventRecorder({ component: 'orchlet', host: 'node-cg', qps: 0, burst: 0, logger: quiet }),
    cgroups: cgroupsForWorkers(cgroups, 'wasm')
  })
  t.teardown(async () => {
    await pods.stopAll()
    await runtime.close()
    rmSync(root, { recursive: true, force: true })
    for (const dir of [['kubepods', 'burstable'], ['kubepods', 'besteffort'], ['kubepods'], []]) driver.remove([top, ...dir])
  })
  return { pods, cgroups, top }
}

function pod (name: string, script: string, resources: Record<string, Record<string, string>>): Pod {
  return {
    apiVersion: 'v1', kind: 'Pod',
    metadata: { name, namespace: 'default', uid: randomUUID() },
    spec: { hostNetwork: true, restartPolicy: 'Never', terminationGracePeriodSeconds: 1,
      containers: [{ name: 'main', image: busyboxImage, imagePullPolicy: 'IfNotPresent', command: ['sh', '-c', script], resources }] }
  }
}

const read = (...path: string[]): string => readFileSync(join(V1, ...path), 'utf8').trim()

if (!env.ok || isCgroupV2(V1) || process.getuid?.() !== 0) {
  if (env.ok || !env.skippable) t.comment('skipping: needs root, cgroup v1 and containerd')
  else t.comment(`skipping: ${env.reason}`)
} else {
  const endpoint = env.endpoint

  t.test('a Burstable pod runs in its pod cgroup with the pod\'s memory limit and CPU quota; node allocatable is on the pods cgroup', async t => {
    const { pods, top } = setup(t, endpoint)
    t.equal(read('memory', top, 'kubepods', 'memory.limit_in_bytes'), String(512 * Mi), 'allocatable memory enforced on the pods cgroup')
    t.equal(read('cpu', top, 'kubepods', 'cpu.shares'), String(1536), 'allocatable cpu as shares')
    const p = pod('burst', 'sleep 3600', { requests: { cpu: '100m', memory: '32Mi' }, limits: { cpu: '500m', memory: '64Mi' } })
    pods.sink.set('file', [p])
    await waitForStatus(pods, p, s => s.containerStatuses?.[0]?.state.running !== undefined, 30_000)
    const podDir = [top, 'kubepods', 'burstable', `pod${p.metadata.uid}`]
    t.equal(read('memory', ...podDir, 'memory.limit_in_bytes'), String(64 * Mi))
    t.equal(read('cpu', ...podDir, 'cpu.cfs_quota_us'), '50000')
    t.equal(read('cpu', ...podDir, 'cpu.cfs_period_us'), '100000')
    t.equal(read('cpu', ...podDir, 'cpu.shares'), '102')
    t.equal(read('pids', ...podDir, 'pids.max'), '64', '--pod-max-pids')
    t.equal(read('cpu', top, 'kubepods', 'burstable', 'cpu.shares'), '102', 'the burstable tier\'s shares follow its pods\' requests')
    const children = readdirSync(join(V1, 'memory', ...podDir)).filter(f => statSync(join(V1, 'memory', ...podDir, f)).isDirectory())
    t.ok(children.length > 0, 'containerd made the containers\' cgroups inside the pod cgroup')
    const procs = children.flatMap(c => read('memory', ...podDir, c, 'cgroup.procs').split('\n').filter(Boolean))
    t.ok(procs.length > 0, 'the container\'s processes are in them')
    pods.sink.set('file', [])
    await pods.idle()
    const deadline = Date.now() + 10_000
    while (existsSync(join(V1, 'memory', ...podDir)) && Date.now() < deadline) await new Promise(resolve => setTimeout(resolve, 100))
    t.notOk(existsSync(join(V1, 'memory', ...podDir)), 'the pod cgroup is removed when the pod goes')
    t.equal(read('cpu', top, 'kubepods', 'burstable', 'cpu.shares'), '2', 'and the tier back to the minimum')
  })

  t.test('a container exceeding its memory limit is OOM-killed by the kernel and reported OOMKilled', async t => {
    const { pods } = setup(t, endpoint)
    // 64 MiB of text into a shell variable is well above the 20 MiB limit.
    const p = pod('hungry', 'x=$(head -c 67108864 /dev/zero | tr "\\0" a); echo survived', { requests: { memory: '10Mi' }, limits: { memory: '20Mi' } })
    pods.sink.set('file', [p])
    const st = await waitForStatus(pods, p, s => s.containerStatuses?.[0]?.state.terminated !== undefined, 60_000)
    const term = st.containerStatuses![0]!.state.terminated!
    t.equal(term.reason, 'OOMKilled')
    t.equal(term.exitCode, 137)
  })
}
