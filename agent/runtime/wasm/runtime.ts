// The built-in WebAssembly runtime (RuntimeClass handler `wasm`): CRI-shaped sandboxes and containers whose
// processes are WASI preview1 modules in worker threads, memory-capped at the container's limit.
// State (sandboxes, containers) lives in memory only: after a restart the orchlet sees no containers and
// recreates them. Persisting it would go in a `state.json` beside the image store, written on each change.
import { mkdir } from 'node:fs/promises'
import { join, isAbsolute } from 'node:path'
import { randomBytes } from 'node:crypto'
import type {
  Container, ContainerConfig, ContainerRuntime, ContainerStatus, PodSandbox, PodSandboxConfig, PodSandboxStatus, RuntimeService
} from '../runtime.js'
import { RuntimeError } from '../runtime.js'
import { ImageStore } from '../oci/store.js'
import type { RegistryClientOptions } from '../oci/registry-client.js'
import { capModuleMemory, PAGE_BYTES, MAX_PAGES, WasmBinaryError } from './binary.js'
import { instrumentMemoryGrow } from './grow-hook.js'
import { ContainerProcess, EXIT_KILLED } from './container.js'
import type { ContainerRecord, PreparedModule, WorkerLimits } from './container.js'
import { createWasmImageService } from './images.js'
import type { WasmImageService } from './images.js'

export const RUNTIME_HANDLER = 'wasm'
export const RUNTIME_VERSION = '0.1.0'
/** Container or pod annotation: wall-clock seconds a container may run before it is killed. */
export const TIMEOUT_ANNOTATION = 'wasm.orch.io/timeout-seconds'
/** Container or pod annotation: CPU seconds a container may use before it is killed (Linux). */
export const CPU_LIMIT_ANNOTATION = 'wasm.orch.io/cpu-seconds'

export interface WasmRuntimeOptions {
  /** Image store and runtime files live here. */
  rootDir: string
  /** Memory cap for containers without a memory limit. Default 512 MiB. */
  defaultMemoryLimitBytes?: number
  /** Wall-clock limit for containers without the timeout annotation; 0 (default) = none. */
  defaultTimeoutSeconds?: number
  /** CPU-time limit for containers without the cpu-seconds annotation; 0 (default) = none. */
  defaultCpuSeconds?: number
  /** V8 heap limits of each container's worker (the wasm memory is capped separately). */
  workerLimits?: Partial<WorkerLimits>
  registry?: RegistryClientOptions
  /** Problems of a running container worth a pod Event (log lines dropped on a full disk); `labels` are the container's. */
  onContainerWarning?: (labels: Record<string, string>, reason: string, message: string) => void
  /** Epoch milliseconds; injected for tests. */
  now?: () => number
  newId?: () => string
}

export interface WasmRuntime extends ContainerRuntime {
  readonly images: WasmImageService
}

interface SandboxRecord { status: PodSandboxStatus; config: PodSandboxConfig }

function notFound (what: string, id: string): RuntimeError {
  return new RuntimeError('NotFound', `${what} ${JSON.stringify(id)} not found`)
}

function matchLabels (labels: Record<string, string>, selector?: Record<string, string>): boolean {
  return Object.entries(selector ?? {}).every(([k, v]) => labels[k] === v)
}

export async function createWasmRuntime (opts: WasmRuntimeOptions): Promise<WasmRuntime> {
  const now = opts.now ?? Date.now
  const nowNs = (): number => now() * 1e6
  const newId = opts.newId ?? (() => randomBytes(32).toString('hex'))
  const store = await ImageStore.open(join(opts.rootDir, 'images'))
  const images = createWasmImageService(store, opts.registry ?? {})
  const limits: WorkerLimits = { maxOldGenerationSizeMb: 64, maxYoungGenerationSizeMb: 16, stackSizeMb: 4, ...opts.workerLimits }
  const workerUrl = new URL(import.meta.url.endsWith('.ts') ? './worker.ts' : './worker.js', import.meta.url)
  const sandboxes = new Map<string, SandboxRecord>()
  const containers = new Map<string, { record: ContainerRecord; prepared: PreparedModule; process?: ContainerProcess; sandboxName: string }>()

  const getSandbox = (id: string): SandboxRecord => {
    const s = sandboxes.get(id)
    if (!s) throw notFound('pod sandbox', id)
    return s
  }
  const getContainer = (id: string): NonNullable<ReturnType<typeof containers.get>> => {
    const c = containers.get(id)
    if (!c) throw notFound('container', id)
    return c
  }

  const stopProcess = async (c: NonNullable<ReturnType<typeof containers.get>>): Promise<void> => {
    if (c.record.state === 'CONTAINER_CREATED') {
      // Never started: CRI reports a stopped, never-run container as exited.
      Object.assign(c.record, { state: 'CONTAINER_EXITED', finishedAt: nowNs(), exitCode: EXIT_KILLED, reason: 'Error', message: 'stopped before start' })
      return
    }
    if (c.process && c.record.state === 'CONTAINER_RUNNING') {
      c.process.kill('Error', 'stopped')
      await c.process.exited
    }
  }

  const prepare = async (config: ContainerConfig, sandbox: SandboxRecord): Promise<{ prepared: PreparedModule; imageRef: string }> => {
    const image = images.resolve(config.image.image)
    if (!image) throw new RuntimeError('NotFound', `image ${JSON.stringify(config.image.image)} not found: pull it first`)
    const limit = config.resources?.memoryLimitInBytes || opts.defaultMemoryLimitBytes || 512 * 1024 * 1024
    const capPages = Math.min(MAX_PAGES, Math.floor(limit / PAGE_BYTES))
    const ic = image.config
    // CRI: command replaces the image's entrypoint, args replace its cmd.
    const argv = config.command.length > 0 ? [...config.command, ...config.args] : [...ic.entrypoint, ...(config.args.length > 0 ? config.args : ic.cmd)]
    if (argv.length === 0) argv.push('module.wasm')
    const env: Record<string, string> = {}
    for (const kv of ic.env) { const i = kv.indexOf('='); if (i > 0) env[kv.slice(0, i)] = kv.slice(i + 1) }
    for (const kv of config.envs) env[kv.key] = kv.value
    const preopens: Record<string, string> = {}
    const readonlyPreopens: string[] = []
    for (const m of config.mounts) {
      if (m.readonly === true) readonlyPreopens.push(m.containerPath)
      if (!isAbsolute(m.containerPath) || !isAbsolute(m.hostPath)) throw new RuntimeError('InvalidArgument', `mount paths must be absolute: ${m.containerPath} -> ${m.hostPath}`)
      preopens[m.containerPath] = m.hostPath
    }
    const seconds = (name: string, fallback: number): number => {
      const raw = config.annotations[name] ?? sandbox.config.annotations[name]
      const v = raw !== undefined ? Number(raw) : fallback
      if (!Number.isFinite(v) || v < 0) throw new RuntimeError('InvalidArgument', `${name} must be a non-negative number of seconds, got ${JSON.stringify(raw)}`)
      return v
    }
    const timeoutMs = seconds(TIMEOUT_ANNOTATION, opts.defaultTimeoutSeconds ?? 0) * 1000
    const cpuLimitMs = seconds(CPU_LIMIT_ANNOTATION, opts.defaultCpuSeconds ?? 0) * 1000
    const base = { args: argv, env, preopens, readonlyPreopens, timeoutMs, cpuLimitMs }
    const bytes = await images.readModule(image)
    try {
      const capped = capModuleMemory(bytes, capPages)
      const hooked = capped.memory ? instrumentMemoryGrow(capped.bytes) : undefined
      const module = await WebAssembly.compile((hooked ?? capped.bytes) as Uint8Array<ArrayBuffer>)
      return { prepared: { ...base, module, memory: capped.memory, growHooked: hooked !== undefined }, imageRef: image.id }
    } catch (err) {
      if (err instanceof WasmBinaryError && err.code === 'WASM_ERR_MEMORY_LIMIT') {
        return { prepared: { ...base, growHooked: false, startFailure: { reason: 'OOMKilled', exitCode: EXIT_KILLED, message: err.message } }, imageRef: image.id }
      }
      throw new RuntimeError('InvalidArgument', `image ${config.image.image}: ${(err as Error).message}`)
    }
  }

  const runtime: RuntimeService = {
    async version () {
      return { version: '0.1.0', runtimeName: 'orch-wasm', runtimeVersion: RUNTIME_VERSION, runtimeApiVersion: 'v1' }
    },

    async status () {
      return { conditions: [{ type: 'RuntimeReady', status: true, reason: '', message: '' }, { type: 'NetworkReady', status: true, reason: '', message: 'WASI preview1 modules have no network' }] }
    },

    async runPodSandbox (config, runtimeHandler) {
      if (runtimeHandler && runtimeHandler !== RUNTIME_HANDLER) throw new RuntimeError('InvalidArgument', `runtime handler ${JSON.stringify(runtimeHandler)} is not served here (want ${RUNTIME_HANDLER})`)
      const m = config.metadata
      for (const s of sandboxes.values()) {
        const o = s.status.metadata
        if (o.name === m.name && o.namespace === m.namespace && o.uid === m.uid && o.attempt === m.attempt) throw new RuntimeError('AlreadyExists', `pod sandbox ${m.namespace}/${m.name} attempt ${m.attempt} already exists`)
      }
      if (config.logDirectory) await mkdir(config.logDirectory, { recursive: true })
      const id = newId()
      sandboxes.set(id, { config: structuredClone(config), status: { id, metadata: { ...m }, state: 'SANDBOX_READY', createdAt: nowNs(), labels: { ...config.labels }, annotations: { ...config.annotations }, runtimeHandler: RUNTIME_HANDLER } })
      return id
    },

    async stopPodSandbox (id) {
      const s = sandboxes.get(id)
      if (!s) return
      await Promise.all([...containers.values()].filter(c => c.record.podSandboxId === id).map(stopProcess))
      s.status.state = 'SANDBOX_NOTREADY'
    },

    async removePodSandbox (id) {
      if (!sandboxes.has(id)) return
      await runtime.stopPodSandbox(id)
      for (const [cid, c] of containers) if (c.record.podSandboxId === id) containers.delete(cid)
      sandboxes.delete(id)
    },

    async podSandboxStatus (id) {
      return structuredClone(getSandbox(id).status)
    },

    async listPodSandbox (filter) {
      return [...sandboxes.values()].map(s => s.status)
        .filter(s => (filter?.id === undefined || s.id === filter.id) && (filter?.state === undefined || s.state === filter.state) && matchLabels(s.labels, filter?.labelSelector))
        .map((s): PodSandbox => structuredClone(s))
    },

    async createContainer (podSandboxId, config) {
      const sandbox = getSandbox(podSandboxId)
      if (sandbox.status.state !== 'SANDBOX_READY') throw new RuntimeError('InvalidArgument', `pod sandbox ${podSandboxId} is not ready`)
      const sandboxName = `${config.metadata.name}_${sandbox.status.metadata.name}_${sandbox.status.metadata.namespace}_${sandbox.status.metadata.uid}_${config.metadata.attempt}`
      for (const c of containers.values()) if (c.sandboxName === sandboxName) throw new RuntimeError('AlreadyExists', `container ${sandboxName} already exists`)
      if (!config.logPath) throw new RuntimeError('InvalidArgument', 'container config has no logPath')
      const { prepared, imageRef } = await prepare(config, sandbox)
      const id = newId()
      const record: ContainerRecord = {
        id, podSandboxId, config: structuredClone(config), imageRef, logPath: join(sandbox.config.logDirectory, config.logPath),
        state: 'CONTAINER_CREATED', createdAt: nowNs(), startedAt: 0, finishedAt: 0, exitCode: 0, reason: '', message: '', memoryBytes: 0
      }
      containers.set(id, { record, prepared, sandboxName })
      return id
    },

    async startContainer (id) {
      const c = getContainer(id)
      if (c.record.state !== 'CONTAINER_CREATED') throw new RuntimeError('InvalidArgument', `container ${id} is ${c.record.state}, not CONTAINER_CREATED`)
      c.process = new ContainerProcess(c.record, c.prepared, limits, nowNs, workerUrl,
        (reason, message) => opts.onContainerWarning?.(c.record.config.labels ?? {}, reason, message))
      try {
        await c.process.start()
      } catch (err) {
        Object.assign(c.record, { state: 'CONTAINER_EXITED', finishedAt: nowNs(), exitCode: 128, reason: 'StartError', message: (err as Error).message })
        throw new RuntimeError('Internal', `starting container ${id}: ${(err as Error).message}`)
      }
    },

    async stopContainer (id, _timeoutSeconds) {
      // WASI preview1 has no signals: a module cannot observe SIGTERM, so the grace period cannot help it
      // and the worker is terminated at once (what SIGKILL would do), well within any timeout.
      await stopProcess(getContainer(id))
    },

    async removeContainer (id) {
      const c = containers.get(id)
      if (!c) return
      await stopProcess(c)
      containers.delete(id)
    },

    async listContainers (filter) {
      return [...containers.values()].map(c => c.record)
        .filter(r => (filter?.id === undefined || r.id === filter.id) && (filter?.podSandboxId === undefined || r.podSandboxId === filter.podSandboxId) &&
          (filter?.state === undefined || r.state === filter.state) && matchLabels(r.config.labels, filter?.labelSelector))
        .map((r): Container => ({ id: r.id, podSandboxId: r.podSandboxId, metadata: { ...r.config.metadata }, image: { ...r.config.image }, imageRef: r.imageRef, state: r.state, createdAt: r.createdAt, labels: { ...r.config.labels }, annotations: { ...r.config.annotations } }))
    },

    async containerStatus (id) {
      const r = getContainer(id).record
      const s: ContainerStatus = {
        id: r.id, metadata: { ...r.config.metadata }, state: r.state, createdAt: r.createdAt, startedAt: r.startedAt, finishedAt: r.finishedAt,
        exitCode: r.exitCode, image: { ...r.config.image }, imageRef: r.imageRef, reason: r.reason, message: r.message,
        labels: { ...r.config.labels }, annotations: { ...r.config.annotations }, logPath: r.logPath, resources: r.config.resources ? { ...r.config.resources } : undefined
      }
      return s
    },

    async execSync (id) {
      getContainer(id)
      throw new RuntimeError('Unimplemented', 'the wasm runtime cannot exec into a running module')
    },

    async containerStats (id) {
      const c = getContainer(id)
      return { id, timestamp: nowNs(), cpuUsageCoreNanoSeconds: await c.process?.cpuNanos(), memoryWorkingSetBytes: c.record.memoryBytes }
    }
  }

  return {
    name: RUNTIME_HANDLER,
    runtime,
    images,
    async close () {
      await Promise.all([...containers.values()].map(stopProcess))
    }
  }
}
