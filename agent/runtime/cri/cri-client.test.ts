// The CRI client against real containerd (started by .ci/containerd.sh) running busybox host-network pods.
import t from 'tap'
import { mkdtempSync, readFileSync, readlinkSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { ContainerConfig, ContainerRuntime, ContainerStatus, PodSandboxConfig } from '../runtime.js'
import { RuntimeError } from '../runtime.js'
import { createCriRuntime } from './cri-runtime.js'
import { busyboxImage, ensureContainerd } from './containerd-for-tests.js'

const env = await ensureContainerd()
if (!env.ok) {
  if (!env.skippable) t.fail(`containerd is required (as root or with CI=true): ${env.reason}`)
  else t.comment(`skipping the containerd tests: ${env.reason}`)
} else {
  await runSuite(env.endpoint)
}

async function runSuite (endpoint: string): Promise<void> {
  const cri = createCriRuntime({ runtimeEndpoint: endpoint, requestTimeoutMs: 30_000 })
  const logDir = mkdtempSync(join(tmpdir(), 'orch-cri-logs-'))
  const uid = `uid-${process.pid}-${Date.now()}`
  const sandboxConfig: PodSandboxConfig = {
    metadata: { name: 'cri-client-test', uid, namespace: 'orch-test', attempt: 0 },
    logDirectory: logDir,
    labels: { 'orch.io/test': uid },
    annotations: { 'orch.io/note': 'host network busybox' },
    hostNetwork: true
  }
  let sandboxId = ''
  t.teardown(async () => {
    if (sandboxId !== '') {
      await cri.runtime.stopPodSandbox(sandboxId).catch(() => {})
      await cri.runtime.removePodSandbox(sandboxId).catch(() => {})
    }
    await cri.close()
    rmSync(logDir, { recursive: true, force: true })
  })

  const container = (name: string, script: string, extra: Partial<ContainerConfig> = {}): ContainerConfig => ({
    metadata: { name, attempt: 0 },
    image: { image: busyboxImage },
    command: ['sh', '-c'],
    args: [script],
    envs: [],
    mounts: [],
    labels: { 'orch.io/container': name },
    annotations: {},
    logPath: `${name}/0.log`,
    ...extra
  })

  const run = async (config: ContainerConfig): Promise<string> => {
    const id = await cri.runtime.createContainer(sandboxId, config, sandboxConfig)
    await cri.runtime.startContainer(id)
    return id
  }

  t.test('version reports containerd speaking CRI v1', async t => {
    const v = await cri.runtime.version()
    t.equal(v.runtimeName, 'containerd')
    t.equal(v.runtimeApiVersion, 'v1')
    t.match(v.runtimeVersion, /^\d+\.\d+/)
  })

  t.test('status reports the runtime ready', async t => {
    const { conditions } = await cri.runtime.status()
    const ready = conditions.find(c => c.type === 'RuntimeReady')
    t.equal(ready?.status, true)
  })

  t.test('lists the imported busybox image and reports its status', async t => {
    const all = await cri.images.listImages()
    const busybox = all.find(i => i.repoTags.includes(busyboxImage))
    t.ok(busybox, 'busybox is listed')
    t.match(busybox?.id, /^sha256:[0-9a-f]{64}$/)
    t.ok((busybox?.size ?? 0) > 100_000, 'size is the layer size')
    const status = await cri.images.imageStatus({ image: busyboxImage })
    t.equal(status?.id, busybox?.id)
    t.equal(await cri.images.imageStatus({ image: 'docker.io/orch/absent:1' }), undefined)
    const fs = await cri.images.imageFsInfo()
    t.ok(fs.length > 0 && fs[0].mountpoint !== '', 'image filesystem reported')
  })

  t.test('a failed pull maps to ImagePullFailed', async t => {
    // No registry listens on port 1, so the resolve fails at once.
    await t.rejects(cri.images.pullImage({ image: '127.0.0.1:1/orch/none:1' }), { code: 'ImagePullFailed' })
  })

  t.test('runs a host-network pod sandbox', async t => {
    sandboxId = await cri.runtime.runPodSandbox(sandboxConfig)
    t.match(sandboxId, /^[0-9a-f]{64}$/)
    const status = await cri.runtime.podSandboxStatus(sandboxId)
    t.equal(status.state, 'SANDBOX_READY')
    t.same(status.metadata, sandboxConfig.metadata)
    t.equal(status.labels['orch.io/test'], uid)
    t.equal(status.annotations['orch.io/note'], 'host network busybox')
    t.ok(status.createdAt > Date.parse('2020-01-01') * 1e6, 'createdAt is in nanoseconds')
    const listed = await cri.runtime.listPodSandbox({ labelSelector: { 'orch.io/test': uid } })
    t.same(listed.map(s => s.id), [sandboxId])
    t.same(await cri.runtime.listPodSandbox({ labelSelector: { 'orch.io/test': 'nobody' } }), [])
  })

  t.test('a container that echoes and exits 3 is reported exited with its logs', async t => {
    const id = await run(container('exits', 'echo "hello $GREETING"; echo oops >&2; exit 3', {
      envs: [{ key: 'GREETING', value: 'from busybox' }]
    }))
    const s = await waitForState(cri, id, 'CONTAINER_EXITED')
    t.equal(s.exitCode, 3)
    t.equal(s.reason, 'Error')
    t.equal(s.metadata.name, 'exits')
    t.equal(s.image.image, busyboxImage)
    t.match(s.imageRef, /^sha256:/)
    // containerd stamps startedAt after the start call returns, so a fast exit may carry an earlier finishedAt.
    t.ok(s.startedAt >= s.createdAt && s.finishedAt >= s.createdAt, 'start and finish follow creation')
    t.equal(s.logPath, join(logDir, 'exits/0.log'))
    // One line per write: RFC 3339 nano time, stream, F(ull) or P(artial) tag, text. Streams may interleave.
    const lines = readFileSync(s.logPath, 'utf8').trimEnd().split('\n')
    const byStream = lines.sort((a, b) => a.split(' ')[1].localeCompare(b.split(' ')[1]))
    t.match(byStream, [
      /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z stderr F oops$/,
      /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z stdout F hello from busybox$/
    ])
    t.equal(lines.length, 2)
  })

  t.test('a host-network container shares the node network namespace', async t => {
    const id = await run(container('netns', 'readlink /proc/self/ns/net'))
    const s = await waitForState(cri, id, 'CONTAINER_EXITED')
    t.equal(s.exitCode, 0)
    t.equal(s.reason, 'Completed')
    t.match(readFileSync(s.logPath, 'utf8'), ` stdout F ${readlinkSync('/proc/self/ns/net')}\n`)
  })

  t.test('exec, stats and stop with a grace period on running containers', async t => {
    const graceful = await run(container('graceful', 'trap "echo got TERM; exit 0" TERM; echo ready; sleep 60 & wait $!'))
    const stubborn = await run(container('stubborn', 'trap "" TERM; sleep 60', {
      resources: { memoryLimitInBytes: 64 * 1024 * 1024 }
    }))
    await waitForState(cri, graceful, 'CONTAINER_RUNNING')
    await waitForLog(join(logDir, 'graceful/0.log'), 'stdout F ready') // its TERM trap is set
    await waitForState(cri, stubborn, 'CONTAINER_RUNNING')

    const ok = await cri.runtime.execSync(graceful, ['sh', '-c', 'echo hi; echo ho >&2'], 10)
    t.same({ out: ok.stdout.toString(), err: ok.stderr.toString(), code: ok.exitCode }, { out: 'hi\n', err: 'ho\n', code: 0 })
    t.equal((await cri.runtime.execSync(graceful, ['sh', '-c', 'exit 5'], 10)).exitCode, 5)

    const stats = await cri.runtime.containerStats(stubborn)
    t.equal(stats.id, stubborn)
    t.ok(stats.timestamp > 0)
    t.ok((stats.memoryWorkingSetBytes ?? -1) >= 0, 'memory working set reported')
    const st = await cri.runtime.containerStatus(stubborn)
    t.equal(st.resources?.memoryLimitInBytes, 64 * 1024 * 1024, 'memory limit applied')

    const running = await cri.runtime.listContainers({ podSandboxId: sandboxId, state: 'CONTAINER_RUNNING' })
    t.same(running.map(c => c.metadata.name).sort(), ['graceful', 'stubborn'])
    t.same((await cri.runtime.listContainers({ labelSelector: { 'orch.io/container': 'graceful' } })).map(c => c.id), [graceful])

    await cri.runtime.stopContainer(graceful, 10)
    const g = await cri.runtime.containerStatus(graceful)
    t.equal(g.state, 'CONTAINER_EXITED')
    t.equal(g.exitCode, 0, 'SIGTERM handled')
    t.match(readFileSync(g.logPath, 'utf8'), /stdout F got TERM\n/)

    const started = Date.now()
    await cri.runtime.stopContainer(stubborn, 1)
    t.ok(Date.now() - started >= 900, 'waited the grace period before SIGKILL')
    const s = await cri.runtime.containerStatus(stubborn)
    t.equal(s.state, 'CONTAINER_EXITED')
    t.equal(s.exitCode, 137, 'killed by SIGKILL')
  })

  t.test('removing a container makes it NotFound', async t => {
    const id = await run(container('removed', 'exit 0'))
    await waitForState(cri, id, 'CONTAINER_EXITED')
    await cri.runtime.removeContainer(id)
    await t.rejects(cri.runtime.containerStatus(id), { code: 'NotFound' })
    t.notOk((await cri.runtime.listContainers({ podSandboxId: sandboxId })).some(c => c.id === id))
  })

  t.test('unknown ids and images map to typed errors', async t => {
    const missing = 'f'.repeat(64)
    await t.rejects(cri.runtime.containerStatus(missing), { code: 'NotFound', name: 'RuntimeError' })
    await t.rejects(cri.runtime.startContainer(missing), { code: 'NotFound' })
    await t.rejects(cri.runtime.podSandboxStatus(missing), { code: 'NotFound' })
    await t.rejects(cri.runtime.stopPodSandbox(missing), { code: 'NotFound' })
    await t.rejects(cri.runtime.containerStatus(''), { code: 'InvalidArgument' })
    const err = await cri.runtime.createContainer(sandboxId, container('noimage', 'true', {
      image: { image: 'docker.io/orch/absent:1' }
    }), sandboxConfig).then(() => undefined, (e: unknown) => e)
    t.ok(err instanceof RuntimeError, 'a RuntimeError')
    t.equal((err as RuntimeError).code, 'NotFound', 'image not present')
  })

  t.test('stopping and removing the sandbox', async t => {
    await cri.runtime.stopPodSandbox(sandboxId)
    t.equal((await cri.runtime.podSandboxStatus(sandboxId)).state, 'SANDBOX_NOTREADY')
    for (const c of await cri.runtime.listContainers({ podSandboxId: sandboxId })) {
      t.equal(c.state, 'CONTAINER_EXITED', `${c.metadata.name} stopped with its sandbox`)
    }
    await cri.runtime.removePodSandbox(sandboxId)
    await t.rejects(cri.runtime.podSandboxStatus(sandboxId), { code: 'NotFound' })
    t.same(await cri.runtime.listContainers({ podSandboxId: sandboxId }), [], 'its containers went with it')
    sandboxId = ''
  })
}

async function waitForState (cri: ContainerRuntime, id: string, state: ContainerStatus['state']): Promise<ContainerStatus> {
  const deadline = Date.now() + 15_000
  for (;;) {
    const s = await cri.runtime.containerStatus(id)
    if (s.state === state) return s
    if (Date.now() > deadline) throw new Error(`container ${id} stayed ${s.state}, wanted ${state}`)
    await new Promise(resolve => setTimeout(resolve, 50))
  }
}

async function waitForLog (path: string, text: string): Promise<void> {
  const deadline = Date.now() + 15_000
  for (;;) {
    let content = ''
    try { content = readFileSync(path, 'utf8') } catch {}
    if (content.includes(text)) return
    if (Date.now() > deadline) throw new Error(`${path} never showed ${JSON.stringify(text)}`)
    await new Promise(resolve => setTimeout(resolve, 50))
  }
}
