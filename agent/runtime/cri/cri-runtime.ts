// ContainerRuntime backed by a CRI runtime (containerd, CRI-O) over gRPC on unix sockets.
import type protobuf from 'protobufjs'
import type {
  ContainerRuntime, ExecSyncResult, Image, ImageService, ImageSpec, RuntimeService
} from '../runtime.js'
import { RuntimeError } from '../runtime.js'
import {
  fromCriContainer, fromCriContainerStats, fromCriContainerStatus, fromCriImage, fromCriSandbox,
  fromCriSandboxStatus, toCriContainerConfig, toCriContainerFilter, toCriImageSpec, toCriSandboxConfig,
  toCriSandboxFilter
} from './convert.js'
import { parseCriEndpoint } from './endpoint.js'
import { createCriGrpcClient, loadCriProto, type CriGrpcClient, type Msg } from './grpc-client.js'

export interface CriRuntimeOptions {
  /** --container-runtime-endpoint, e.g. unix:///run/containerd/containerd.sock */
  runtimeEndpoint: string
  /** --image-service-endpoint; defaults to the runtime endpoint. */
  imageEndpoint?: string
  /** --runtime-request-timeout in ms (default 2m): the deadline of every call except PullImage. */
  requestTimeoutMs?: number
  /** Deadline of PullImage in ms; 0 or absent = none (pulls of large images legitimately take long). */
  pullTimeoutMs?: number
  /** Name reported as ContainerRuntime.name (default "cri"). */
  name?: string
  /** Wall clock in ms, for stats timestamps the runtime leaves out. */
  now?: () => number
  /** A schema already loaded with loadCriProto, to share between runtimes. */
  proto?: protobuf.Root
}

export const defaultRequestTimeoutMs = 2 * 60 * 1000

/** The CRI API version this client speaks (VersionRequest.version). */
export const criApiVersion = 'v1'

const requireId = (what: string, id: string): void => {
  if (typeof id !== 'string' || id === '') throw new RuntimeError('InvalidArgument', `${what} must be a non-empty string`)
}

export function createCriRuntime (opts: CriRuntimeOptions): ContainerRuntime {
  const runtimeTarget = parseCriEndpoint(opts.runtimeEndpoint)
  const imageTarget = parseCriEndpoint(opts.imageEndpoint ?? opts.runtimeEndpoint)
  const timeoutMs = opts.requestTimeoutMs ?? defaultRequestTimeoutMs
  const now = opts.now ?? Date.now
  const root = opts.proto ?? loadCriProto()
  const rt = createCriGrpcClient(runtimeTarget, root)
  const img: CriGrpcClient = imageTarget === runtimeTarget ? rt : createCriGrpcClient(imageTarget, root)

  const r = (method: string, req: Msg, ms: number | undefined = timeoutMs): Promise<Msg> =>
    rt.call('RuntimeService', method, req, { timeoutMs: ms })
  const i = (method: string, req: Msg, ms: number | undefined = timeoutMs): Promise<Msg> =>
    img.call('ImageService', method, req, { timeoutMs: ms })

  const runtime: RuntimeService = {
    version: async () => {
      const v = await r('Version', { version: criApiVersion })
      return { version: v.version, runtimeName: v.runtimeName, runtimeVersion: v.runtimeVersion, runtimeApiVersion: v.runtimeApiVersion }
    },
    status: async () => {
      const s = await r('Status', { verbose: false })
      const conditions = (s.status?.conditions ?? []) as Msg[]
      return { conditions: conditions.map(c => ({ type: c.type, status: c.status, reason: c.reason, message: c.message })) }
    },

    // containerd's verbose status carries its CRI config as JSON, with cni.confDir (CRI-O's has no such key).
    cniConfDir: async () => {
      const s = await r('Status', { verbose: true })
      const config = (s.info as Record<string, string> | undefined)?.config
      if (config === undefined) return undefined
      try {
        const dir = (JSON.parse(config) as { cni?: { confDir?: unknown } }).cni?.confDir
        return typeof dir === 'string' ? dir : undefined
      } catch { return undefined }
    },

    runPodSandbox: async (config, runtimeHandler = '') =>
      (await r('RunPodSandbox', { config: toCriSandboxConfig(config), runtimeHandler })).podSandboxId,
    stopPodSandbox: async (id) => { requireId('podSandboxId', id); await r('StopPodSandbox', { podSandboxId: id }) },
    removePodSandbox: async (id) => { requireId('podSandboxId', id); await r('RemovePodSandbox', { podSandboxId: id }) },
    podSandboxStatus: async (id) => {
      requireId('podSandboxId', id)
      const res = await r('PodSandboxStatus', { podSandboxId: id, verbose: false })
      if (res.status === null) throw new RuntimeError('NotFound', `pod sandbox ${id} not found`)
      return fromCriSandboxStatus(res.status)
    },
    listPodSandbox: async (filter) =>
      ((await r('ListPodSandbox', { filter: toCriSandboxFilter(filter) })).items as Msg[]).map(fromCriSandbox),

    createContainer: async (sandboxId, config, sandboxConfig) => {
      requireId('podSandboxId', sandboxId)
      const res = await r('CreateContainer', {
        podSandboxId: sandboxId,
        config: toCriContainerConfig(config, sandboxConfig),
        sandboxConfig: toCriSandboxConfig(sandboxConfig)
      })
      return res.containerId as string
    },
    startContainer: async (id) => { requireId('containerId', id); await r('StartContainer', { containerId: id }) },
    // The kubelet's rule: the call may take the grace period on top of the request timeout.
    stopContainer: async (id, timeoutSeconds) => {
      requireId('containerId', id)
      const grace = Math.max(0, Math.floor(timeoutSeconds))
      await r('StopContainer', { containerId: id, timeout: grace }, timeoutMs + grace * 1000)
    },
    removeContainer: async (id) => { requireId('containerId', id); await r('RemoveContainer', { containerId: id }) },
    reopenContainerLog: async (id) => { requireId('containerId', id); await r('ReopenContainerLog', { containerId: id }) },
    listContainers: async (filter) =>
      ((await r('ListContainers', { filter: toCriContainerFilter(filter) })).containers as Msg[]).map(fromCriContainer),
    containerStatus: async (id) => {
      requireId('containerId', id)
      const res = await r('ContainerStatus', { containerId: id, verbose: false })
      if (res.status === null) throw new RuntimeError('NotFound', `container ${id} not found`)
      return fromCriContainerStatus(res.status)
    },
    // An exec without a timeout has no deadline either (the kubelet does the same).
    execSync: async (id, cmd, timeoutSeconds): Promise<ExecSyncResult> => {
      requireId('containerId', id)
      const secs = Math.max(0, Math.floor(timeoutSeconds))
      const res = await r('ExecSync', { containerId: id, cmd, timeout: secs }, secs > 0 ? timeoutMs + secs * 1000 : undefined)
      return { stdout: Buffer.from(res.stdout ?? []), stderr: Buffer.from(res.stderr ?? []), exitCode: res.exitCode }
    },
    containerStats: async (id) => {
      requireId('containerId', id)
      const res = await r('ContainerStats', { containerId: id })
      if (res.stats === null) throw new RuntimeError('NotFound', `no stats for container ${id}`)
      return fromCriContainerStats(res.stats, id, now() * 1e6)
    },
    streamingUrl: async (s) => {
      if (s.kind === 'portforward') {
        requireId('podSandboxId', s.podSandboxId)
        return String((await r('PortForward', { podSandboxId: s.podSandboxId, port: s.ports })).url)
      }
      requireId('containerId', s.containerId)
      const flags = { tty: s.tty, stdin: s.stdin, stdout: s.stdout, stderr: s.stderr && !s.tty }
      const res = s.kind === 'exec' ? await r('Exec', { containerId: s.containerId, cmd: s.cmd, ...flags }) : await r('Attach', { containerId: s.containerId, ...flags })
      return String(res.url)
    }
  }

  const imageStatus = async (spec: ImageSpec): Promise<Image | undefined> => {
    const res = await i('ImageStatus', { image: toCriImageSpec(spec), verbose: false })
    return res.image === null ? undefined : fromCriImage(res.image)
  }

  const images: ImageService = {
    // containerd 1.6 ignores ListImages filters, so a filtered list is the image the runtime resolves
    // the reference to (its own normalisation of names, tags, digests and IDs), or nothing.
    listImages: async (filter) => {
      if (filter?.image !== undefined) {
        const one = await imageStatus(filter.image)
        return one === undefined ? [] : [one]
      }
      return ((await i('ListImages', {})).images as Msg[]).map(fromCriImage)
    },
    imageStatus,
    pullImage: async (spec, auth, sandboxConfig) => {
      const req: Msg = { image: toCriImageSpec(spec) }
      if (auth !== undefined) req.auth = { ...auth }
      if (sandboxConfig !== undefined) req.sandboxConfig = toCriSandboxConfig(sandboxConfig)
      return (await i('PullImage', req, opts.pullTimeoutMs)).imageRef as string
    },
    removeImage: async (spec) => { await i('RemoveImage', { image: toCriImageSpec(spec) }) },
    imageFsInfo: async () => {
      const res = await i('ImageFsInfo', {})
      return (res.imageFilesystems as Msg[]).map(fs => ({
        usedBytes: fs.usedBytes?.value ?? 0,
        inodesUsed: fs.inodesUsed?.value ?? 0,
        mountpoint: fs.fsId?.mountpoint ?? ''
      }))
    }
  }

  return {
    name: opts.name ?? 'cri',
    runtime,
    images,
    async close () {
      rt.close()
      if (img !== rt) img.close()
    }
  }
}
