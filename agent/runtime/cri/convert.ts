// Maps the orchlet's camelCase runtime types (../runtime.ts) to CRI runtime.v1 messages and back.
import type {
  SecurityProfile, Container, ContainerConfig, ContainerFilter, ContainerStats, ContainerStatus, Image, ImageSpec,
  LinuxContainerResources, PodSandbox, PodSandboxConfig, PodSandboxFilter, PodSandboxStatus
} from '../runtime.js'
import type { Msg } from './grpc-client.js'

// ---- to CRI ----

/** Namespaces as the kubelet sets them: pod IPC, per-container PID, pod or node network. */
function namespaceOptions (hostNetwork: boolean): Msg {
  return { network: hostNetwork ? 'NODE' : 'POD', pid: 'CONTAINER', ipc: 'POD' }
}

export function toCriResources (r: LinuxContainerResources | undefined): Msg | undefined {
  if (r === undefined) return undefined
  return {
    cpuPeriod: r.cpuPeriod ?? 0,
    cpuQuota: r.cpuQuota ?? 0,
    cpuShares: r.cpuShares ?? 0,
    memoryLimitInBytes: r.memoryLimitInBytes ?? 0,
    oomScoreAdj: r.oomScoreAdj ?? 0
  }
}

/** Without a profile the field is left out (the runtime's own choice); with one, CRI's SecurityProfile. */
function seccompOf (p: SecurityProfile | undefined): Msg {
  return p === undefined ? {} : { seccomp: { profileType: p.profileType, localhostRef: p.localhostRef ?? '' } }
}

export function toCriSandboxConfig (c: PodSandboxConfig): Msg {
  return {
    metadata: { ...c.metadata },
    hostname: c.hostname ?? '',
    logDirectory: c.logDirectory,
    labels: { ...c.labels },
    annotations: { ...c.annotations },
    portMappings: (c.portMappings ?? []).map(m => ({ ...m })),
    ...(c.dnsConfig === undefined ? {} : { dnsConfig: { servers: [...c.dnsConfig.servers], searches: [...c.dnsConfig.searches], options: [...c.dnsConfig.options] } }),
    linux: {
      cgroupParent: c.cgroupParent ?? '',
      securityContext: { namespaceOptions: namespaceOptions(c.hostNetwork), ...seccompOf(c.seccomp) },
      sysctls: { ...(c.sysctls ?? {}) }
    }
  }
}

export function toCriImageSpec (s: ImageSpec): Msg {
  return { image: s.image, annotations: { ...(s.annotations ?? {}) } }
}

export function toCriContainerConfig (c: ContainerConfig, sandbox: PodSandboxConfig): Msg {
  return {
    metadata: { ...c.metadata },
    image: toCriImageSpec(c.image),
    command: [...c.command],
    args: [...c.args],
    workingDir: c.workingDir ?? '',
    envs: c.envs.map(e => ({ key: e.key, value: Buffer.from(e.value, 'utf8') })),
    mounts: c.mounts.map(m => ({ containerPath: m.containerPath, hostPath: m.hostPath, readonly: m.readonly ?? false })),
    labels: { ...c.labels },
    annotations: { ...c.annotations },
    logPath: c.logPath,
    stdin: c.stdin ?? false,
    tty: c.tty ?? false,
    linux: {
      resources: toCriResources(c.resources),
      securityContext: { namespaceOptions: namespaceOptions(sandbox.hostNetwork), ...seccompOf(c.seccomp) }
    }
  }
}

export function toCriSandboxFilter (f: PodSandboxFilter | undefined): Msg | undefined {
  if (f === undefined) return undefined
  return {
    id: f.id ?? '',
    state: f.state !== undefined ? { state: f.state } : undefined,
    labelSelector: { ...(f.labelSelector ?? {}) }
  }
}

export function toCriContainerFilter (f: ContainerFilter | undefined): Msg | undefined {
  if (f === undefined) return undefined
  return {
    id: f.id ?? '',
    podSandboxId: f.podSandboxId ?? '',
    state: f.state !== undefined ? { state: f.state } : undefined,
    labelSelector: { ...(f.labelSelector ?? {}) }
  }
}

// ---- from CRI ----

const str = (v: unknown): string => typeof v === 'string' ? v : ''
const num = (v: unknown): number => typeof v === 'number' ? v : 0
const strMap = (v: unknown): Record<string, string> => ({ ...(v ?? {}) as Record<string, string> })

function fromCriImageSpec (s: Msg | null | undefined): ImageSpec {
  const annotations = strMap(s?.annotations)
  return Object.keys(annotations).length > 0 ? { image: str(s?.image), annotations } : { image: str(s?.image) }
}

function fromCriMeta<T extends Msg> (m: Msg | null | undefined, empty: T): T {
  return { ...empty, ...(m ?? {}) }
}

function fromCriResources (r: Msg | null | undefined): LinuxContainerResources | undefined {
  if (r === null || r === undefined) return undefined
  return {
    cpuPeriod: num(r.cpuPeriod),
    cpuQuota: num(r.cpuQuota),
    cpuShares: num(r.cpuShares),
    memoryLimitInBytes: num(r.memoryLimitInBytes),
    oomScoreAdj: num(r.oomScoreAdj)
  }
}

const sandboxMetaEmpty = { name: '', uid: '', namespace: '', attempt: 0 }

export function fromCriSandbox (s: Msg): PodSandbox {
  return {
    id: str(s.id),
    metadata: fromCriMeta(s.metadata, sandboxMetaEmpty),
    state: s.state === 'SANDBOX_READY' ? 'SANDBOX_READY' : 'SANDBOX_NOTREADY',
    createdAt: num(s.createdAt),
    labels: strMap(s.labels),
    annotations: strMap(s.annotations),
    runtimeHandler: str(s.runtimeHandler)
  }
}

export function fromCriSandboxStatus (s: Msg): PodSandboxStatus {
  const out: PodSandboxStatus = fromCriSandbox(s)
  const net = s.network as Msg | null
  // Host-network sandboxes report no IP of their own; the pod then takes the node's.
  if (net !== null && net !== undefined && (str(net.ip) !== '' || (net.additionalIps as Msg[] ?? []).length > 0)) {
    const extra = (net.additionalIps as Msg[] ?? []).map(ip => str(ip.ip)).filter(ip => ip !== '')
    out.network = extra.length > 0 ? { ip: str(net.ip), additionalIps: extra } : { ip: str(net.ip) }
  }
  return out
}

const containerStates = new Set(['CONTAINER_CREATED', 'CONTAINER_RUNNING', 'CONTAINER_EXITED', 'CONTAINER_UNKNOWN'])
const containerState = (v: unknown): Container['state'] =>
  containerStates.has(v as string) ? v as Container['state'] : 'CONTAINER_UNKNOWN'

export function fromCriContainer (c: Msg): Container {
  return {
    id: str(c.id),
    podSandboxId: str(c.podSandboxId),
    metadata: fromCriMeta(c.metadata, { name: '', attempt: 0 }),
    image: fromCriImageSpec(c.image),
    imageRef: str(c.imageRef),
    state: containerState(c.state),
    createdAt: num(c.createdAt),
    labels: strMap(c.labels),
    annotations: strMap(c.annotations)
  }
}

export function fromCriContainerStatus (s: Msg): ContainerStatus {
  const out: ContainerStatus = {
    id: str(s.id),
    metadata: fromCriMeta(s.metadata, { name: '', attempt: 0 }),
    state: containerState(s.state),
    createdAt: num(s.createdAt),
    startedAt: num(s.startedAt),
    finishedAt: num(s.finishedAt),
    exitCode: num(s.exitCode),
    image: fromCriImageSpec(s.image),
    imageRef: str(s.imageRef),
    reason: str(s.reason),
    message: str(s.message),
    labels: strMap(s.labels),
    annotations: strMap(s.annotations),
    logPath: str(s.logPath)
  }
  const resources = fromCriResources((s.resources as Msg | null)?.linux)
  if (resources !== undefined) out.resources = resources
  return out
}

export function fromCriImage (i: Msg): Image {
  return {
    id: str(i.id),
    repoTags: [...(i.repoTags as string[] ?? [])],
    repoDigests: [...(i.repoDigests as string[] ?? [])],
    size: num(i.size)
  }
}

/** CRI wraps optional counters in UInt64Value; absent means "not reported". */
const wrapped = (v: Msg | null | undefined): number | undefined =>
  v === null || v === undefined ? undefined : num(v.value)

export function fromCriContainerStats (s: Msg, fallbackId: string, nowNs: number): ContainerStats {
  const out: ContainerStats = {
    id: str((s.attributes as Msg | null)?.id) || fallbackId,
    timestamp: num((s.cpu as Msg | null)?.timestamp) || num((s.memory as Msg | null)?.timestamp) || nowNs
  }
  const cpu = wrapped((s.cpu as Msg | null)?.usageCoreNanoSeconds)
  const mem = wrapped((s.memory as Msg | null)?.workingSetBytes)
  if (cpu !== undefined) out.cpuUsageCoreNanoSeconds = cpu
  if (mem !== undefined) out.memoryWorkingSetBytes = mem
  const layer = wrapped((s.writableLayer as Msg | null)?.usedBytes)
  if (layer !== undefined) out.writableLayerBytes = layer
  return out
}
