// The shared runtime conformance suite: every ContainerRuntime (the CRI client against containerd, the
// built-in wasm runtime) runs these tap tests. Fixtures say which image to use and which command makes a
// container print lines, exit N, sleep, echo an env var or read a file, so busybox and a WASI module
// meet the same specification.
import { mkdtemp, readFile, rm, writeFile, mkdir } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { randomBytes } from 'node:crypto'
import type { Test } from 'tap'
import { RuntimeError } from './runtime.js'
import type { ContainerConfig, ContainerRuntime, ContainerStatus, Mount, PodSandboxConfig } from './runtime.js'

export interface RuntimeCommand { command: string[]; args: string[] }

export interface RuntimeConformanceFixtures {
  /** Image every container runs; present after `ensureImage`. */
  image: string
  /** Makes `image` present (pull or import); called again after the suite removes it. */
  ensureImage: (rt: ContainerRuntime) => Promise<void>
  /** A reference whose pull must fail. */
  missingImage: string
  /** An image the suite pulls through `pullImage` (omit where the runtime has no registry to reach). */
  pullableImage?: string
  /** Passed to runPodSandbox; '' or undefined for the default handler. */
  runtimeHandler?: string
  /** Sandbox host network (containerd without CNI needs true). Default true. */
  hostNetwork?: boolean
  commands: {
    /** Prints each line on stdout, exits 0. */
    printLines: (lines: string[]) => RuntimeCommand
    /** Prints the line on stderr, exits 0. */
    printStderr: (line: string) => RuntimeCommand
    exit: (code: number) => RuntimeCommand
    /** Runs until stopped. */
    sleep: () => RuntimeCommand
    /** Prints the value of env var `name` and a newline. */
    printEnv: (name: string) => RuntimeCommand
    /** Prints the contents of the file at `path`. */
    readFile: (path: string) => RuntimeCommand
  }
  /** How long a short command may take from start to exit. Default 20000. */
  exitTimeoutMs?: number
}

export interface RuntimeConformanceOptions {
  newRuntime: () => Promise<ContainerRuntime>
  fixtures: RuntimeConformanceFixtures
}

const CRI_LINE = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{1,9})?(?:Z|[+-]\d\d:\d\d)) (stdout|stderr) (F|P) (.*)$/

async function rejectsWith (t: Test, p: Promise<unknown>, codes: string[], name: string): Promise<void> {
  try {
    await p
    t.fail(`${name}: expected a RuntimeError (${codes.join('|')}), got success`)
  } catch (err) {
    t.ok(err instanceof RuntimeError && codes.includes(err.code), `${name}: rejects with ${codes.join('|')} (got ${(err as RuntimeError).code ?? (err as Error).message})`)
  }
}

/** Run the suite as subtests of `t`. */
export async function runRuntimeConformance (t: Test, opts: RuntimeConformanceOptions): Promise<void> {
  const fx = opts.fixtures
  const exitTimeout = fx.exitTimeoutMs ?? 20000
  const root = await mkdtemp(join(tmpdir(), 'orch-rtconf-'))
  let rt!: ContainerRuntime
  t.before(async () => { rt = await opts.newRuntime(); await fx.ensureImage(rt) })
  t.teardown(async () => { await rt?.close(); await rm(root, { recursive: true, force: true }) })

  const sandboxConfig = (labels: Record<string, string> = {}): PodSandboxConfig => {
    const uid = randomBytes(8).toString('hex')
    return { metadata: { name: `pod-${uid}`, uid, namespace: 'conformance', attempt: 0 }, logDirectory: join(root, 'pods', uid), labels, annotations: {}, hostNetwork: fx.hostNetwork ?? true }
  }
  const containerConfig = (name: string, cmd: RuntimeCommand, extra: Partial<ContainerConfig> = {}): ContainerConfig => ({
    metadata: { name, attempt: 0 }, image: { image: fx.image }, command: cmd.command, args: cmd.args, envs: [], mounts: [],
    labels: {}, annotations: {}, logPath: `${name}/0.log`, ...extra
  })
  const newSandbox = async (labels?: Record<string, string>): Promise<{ id: string; config: PodSandboxConfig }> => {
    const config = sandboxConfig(labels)
    return { id: await rt.runtime.runPodSandbox(config, fx.runtimeHandler), config }
  }
  const waitExited = async (id: string, timeoutMs = exitTimeout): Promise<ContainerStatus> => {
    const deadline = Date.now() + timeoutMs
    for (;;) {
      const s = await rt.runtime.containerStatus(id)
      if (s.state === 'CONTAINER_EXITED' || Date.now() > deadline) return s
      await new Promise(resolve => setTimeout(resolve, 25))
    }
  }
  const runToExit = async (name: string, cmd: RuntimeCommand, extra?: Partial<ContainerConfig>): Promise<{ status: ContainerStatus; log: string[] }> => {
    const sb = await newSandbox()
    const config = containerConfig(name, cmd, extra)
    const id = await rt.runtime.createContainer(sb.id, config, sb.config)
    await rt.runtime.startContainer(id)
    const status = await waitExited(id)
    const text = await readFile(join(sb.config.logDirectory, config.logPath), 'utf8').catch(() => '')
    await rt.runtime.removePodSandbox(sb.id)
    return { status, log: text.split('\n').filter(l => l !== '') }
  }
  const content = (log: string[], stream: string): string[] => log.map(l => CRI_LINE.exec(l)).filter(m => m?.[2] === stream).map(m => (m as RegExpExecArray)[4])

  t.test('reports its version and a ready runtime', async t => {
    const v = await rt.runtime.version()
    t.equal(v.runtimeApiVersion, 'v1')
    t.ok(v.runtimeName.length > 0 && v.runtimeVersion.length > 0)
    const { conditions } = await rt.runtime.status()
    t.equal(conditions.find(c => c.type === 'RuntimeReady')?.status, true)
  })

  t.test('lists, reports and removes images', async t => {
    const img = await rt.images.imageStatus({ image: fx.image })
    t.ok(img && img.id.length > 0, 'the fixture image is present')
    t.ok((await rt.images.listImages()).some(i => i.id === img?.id), 'listImages includes it')
    t.same((await rt.images.listImages({ image: { image: fx.image } })).map(i => i.id), [img?.id], 'listImages filters by image')
    t.equal(await rt.images.imageStatus({ image: 'example.invalid/none/such:1' }), undefined, 'an unknown image has no status')
    await rejectsWith(t, rt.images.pullImage({ image: fx.missingImage }), ['ImagePullFailed', 'NotFound', 'Unavailable'], 'pulling a missing image')
    if (fx.pullableImage !== undefined) {
      const ref = await rt.images.pullImage({ image: fx.pullableImage })
      t.ok(ref.length > 0, 'pull returns the image reference')
      t.ok(await rt.images.imageStatus({ image: fx.pullableImage }), 'the pulled image has a status')
    }
    await rt.images.removeImage({ image: fx.image })
    t.equal(await rt.images.imageStatus({ image: fx.image }), undefined, 'a removed image has no status')
    t.notOk((await rt.images.listImages()).some(i => i.id === img?.id), 'a removed image is not listed')
    await fx.ensureImage(rt)
    t.ok(await rt.images.imageStatus({ image: fx.image }), 'the image is back')
    t.ok((await rt.images.imageFsInfo()).length > 0, 'imageFsInfo reports a filesystem')
  })

  t.test('runs, lists, stops and removes a pod sandbox', async t => {
    const label = randomBytes(4).toString('hex')
    const sb = await newSandbox({ suite: label })
    const st = await rt.runtime.podSandboxStatus(sb.id)
    t.equal(st.state, 'SANDBOX_READY')
    t.same(st.metadata, sb.config.metadata)
    t.ok(st.createdAt > 0)
    t.same((await rt.runtime.listPodSandbox({ labelSelector: { suite: label } })).map(s => s.id), [sb.id], 'filters by label')
    t.ok((await rt.runtime.listPodSandbox({ id: sb.id, state: 'SANDBOX_READY' })).length === 1, 'filters by id and state')
    await rt.runtime.stopPodSandbox(sb.id)
    t.equal((await rt.runtime.podSandboxStatus(sb.id)).state, 'SANDBOX_NOTREADY')
    await rt.runtime.removePodSandbox(sb.id)
    await rejectsWith(t, rt.runtime.podSandboxStatus(sb.id), ['NotFound'], 'status of a removed sandbox')
    t.notOk((await rt.runtime.listPodSandbox()).some(s => s.id === sb.id), 'a removed sandbox is not listed')
    await rt.runtime.removePodSandbox(sb.id) // idempotent
  })

  t.test('runs a container to completion and writes its output in the CRI log format', async t => {
    const sb = await newSandbox()
    const config = containerConfig('printer', fx.commands.printLines(['hello', 'second line']), { labels: { role: 'printer' } })
    const id = await rt.runtime.createContainer(sb.id, config, sb.config)
    const created = await rt.runtime.containerStatus(id)
    t.equal(created.state, 'CONTAINER_CREATED')
    t.equal(created.startedAt, 0)
    t.same(created.metadata, config.metadata)
    const listed = await rt.runtime.listContainers({ podSandboxId: sb.id })
    t.same(listed.map(c => [c.id, c.state, c.labels.role]), [[id, 'CONTAINER_CREATED', 'printer']])
    await rt.runtime.startContainer(id)
    const s = await waitExited(id)
    t.equal(s.state, 'CONTAINER_EXITED')
    t.equal(s.exitCode, 0)
    t.equal(s.reason, 'Completed')
    // containerd stamps startedAt when the start call returns, which for a process this short can be after
    // its exit: so only that both are set, and not before the container was created, is asserted.
    t.ok(s.startedAt >= created.createdAt && s.finishedAt >= created.createdAt, 'start and finish times are set')
    t.ok(s.logPath.endsWith(config.logPath), 'the status names the log file')
    t.same((await rt.runtime.listContainers({ id, state: 'CONTAINER_EXITED' })).map(c => c.id), [id], 'filters by id and state')
    const log = (await readFile(join(sb.config.logDirectory, config.logPath), 'utf8')).split('\n').filter(l => l !== '')
    t.ok(log.every(l => CRI_LINE.test(l)), 'every line is `<RFC3339Nano> <stream> <F|P> <content>`')
    t.same(content(log, 'stdout'), ['hello', 'second line'])
    await rt.runtime.removePodSandbox(sb.id)
  })

  t.test('propagates exit codes', async t => {
    const { status } = await runToExit('exits', fx.commands.exit(3))
    t.equal(status.state, 'CONTAINER_EXITED')
    t.equal(status.exitCode, 3)
    t.equal(status.reason, 'Error')
  })

  t.test('writes stderr to the log as the stderr stream', async t => {
    const { status, log } = await runToExit('warns', fx.commands.printStderr('something odd'))
    t.equal(status.exitCode, 0)
    t.same(content(log, 'stderr'), ['something odd'])
  })

  t.test('passes the config environment to the container', async t => {
    const { log } = await runToExit('env', fx.commands.printEnv('GREETING'), { envs: [{ key: 'GREETING', value: 'hello there' }] })
    t.same(content(log, 'stdout'), ['hello there'])
  })

  t.test('mounts a host directory at the container path', async t => {
    const host = join(root, 'vol-' + randomBytes(4).toString('hex'))
    await mkdir(host, { recursive: true })
    await writeFile(join(host, 'greeting.txt'), 'from the host\n')
    const mounts: Mount[] = [{ containerPath: '/data', hostPath: host, readonly: false }]
    const { status, log } = await runToExit('reader', fx.commands.readFile('/data/greeting.txt'), { mounts })
    t.equal(status.exitCode, 0)
    t.same(content(log, 'stdout'), ['from the host'])
  })

  t.test('stops a running container within the timeout', async t => {
    const sb = await newSandbox()
    const id = await rt.runtime.createContainer(sb.id, containerConfig('sleeper', fx.commands.sleep()), sb.config)
    await rt.runtime.startContainer(id)
    await new Promise(resolve => setTimeout(resolve, 200))
    t.equal((await rt.runtime.containerStatus(id)).state, 'CONTAINER_RUNNING')
    const started = Date.now()
    await rt.runtime.stopContainer(id, 2)
    t.ok(Date.now() - started < 2000 + 3000, 'stop returns within the timeout (plus slack)')
    const s = await rt.runtime.containerStatus(id)
    t.equal(s.state, 'CONTAINER_EXITED')
    t.not(s.exitCode, 0, 'a stopped container has a non-zero exit code')
    await rt.runtime.stopContainer(id, 0) // stopping an exited container is fine
    await rt.runtime.removeContainer(id)
    await rejectsWith(t, rt.runtime.containerStatus(id), ['NotFound'], 'status of a removed container')
    t.notOk((await rt.runtime.listContainers()).some(c => c.id === id), 'a removed container is not listed')
    await rt.runtime.removeContainer(id) // idempotent
    await rt.runtime.removePodSandbox(sb.id)
  })

  t.test('stopping a sandbox stops its containers', async t => {
    const sb = await newSandbox()
    const id = await rt.runtime.createContainer(sb.id, containerConfig('sleeper2', fx.commands.sleep()), sb.config)
    await rt.runtime.startContainer(id)
    await rt.runtime.stopPodSandbox(sb.id)
    t.equal((await waitExited(id, 10000)).state, 'CONTAINER_EXITED')
    await rt.runtime.removePodSandbox(sb.id)
    t.notOk((await rt.runtime.listContainers()).some(c => c.id === id), 'removing the sandbox removed its containers')
  })

  t.test('rejects unknown ids and images with typed errors', async t => {
    await rejectsWith(t, rt.runtime.containerStatus('0123456789abcdef'), ['NotFound'], 'containerStatus')
    await rejectsWith(t, rt.runtime.podSandboxStatus('0123456789abcdef'), ['NotFound'], 'podSandboxStatus')
    await rejectsWith(t, rt.runtime.startContainer('0123456789abcdef'), ['NotFound'], 'startContainer')
    await rejectsWith(t, rt.runtime.stopContainer('0123456789abcdef', 0), ['NotFound'], 'stopContainer')
    const config = sandboxConfig()
    await rejectsWith(t, rt.runtime.createContainer('0123456789abcdef', containerConfig('orphan', fx.commands.exit(0)), config), ['NotFound'], 'createContainer in an unknown sandbox')
    const sb = await newSandbox()
    await rejectsWith(t, rt.runtime.createContainer(sb.id, containerConfig('noimage', fx.commands.exit(0), { image: { image: 'example.invalid/none/such:1' } }), sb.config), ['NotFound', 'InvalidArgument'], 'createContainer with an absent image')
    const id = await rt.runtime.createContainer(sb.id, containerConfig('dup', fx.commands.exit(0)), sb.config)
    await rejectsWith(t, rt.runtime.createContainer(sb.id, containerConfig('dup', fx.commands.exit(0)), sb.config), ['AlreadyExists'], 'a second container with the same name and attempt')
    await rt.runtime.removeContainer(id)
    await rt.runtime.removePodSandbox(sb.id)
  })
}
