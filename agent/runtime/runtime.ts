// The container runtime contract of the orchlet: CRI's RuntimeService and ImageService, in camelCase.
// Field names follow runtime.v1 (../../proto/cri/api.proto) as protobufjs maps them (snake_case -> camelCase).

export interface KeyValue { key: string; value: string }

export interface Mount {
  containerPath: string
  hostPath: string
  readonly?: boolean
}

export interface LinuxContainerResources {
  cpuPeriod?: number
  cpuQuota?: number
  cpuShares?: number
  /** Bytes; 0 = unlimited. The WebAssembly runtime caps linear memory at this. */
  memoryLimitInBytes?: number
  oomScoreAdj?: number
}

export interface PodSandboxMetadata { name: string; uid: string; namespace: string; attempt: number }

export interface PodSandboxConfig {
  metadata: PodSandboxMetadata
  hostname?: string
  logDirectory: string
  labels: Record<string, string>
  annotations: Record<string, string>
  /** Host network (CRI: linux.securityContext.namespaceOptions.network = NODE). */
  hostNetwork: boolean
  cgroupParent?: string
  /** The resolver configuration the runtime writes as the pod's /etc/resolv.conf. */
  dnsConfig?: { servers: string[]; searches: string[]; options: string[] }
  /** Namespaced sysctls set in the pod's sandbox. */
  sysctls?: Record<string, string>
  seccomp?: SecurityProfile
  /** The containers' ports; those with a hostPort are published on the node (CNI portmap). */
  portMappings?: Array<{ protocol: 'TCP' | 'UDP' | 'SCTP'; containerPort: number; hostPort: number; hostIp: string }>
}

export interface ContainerMetadata { name: string; attempt: number }

export interface ImageSpec { image: string; annotations?: Record<string, string> }

export interface ContainerConfig {
  metadata: ContainerMetadata
  image: ImageSpec
  command: string[]
  args: string[]
  workingDir?: string
  envs: KeyValue[]
  mounts: Mount[]
  labels: Record<string, string>
  annotations: Record<string, string>
  /** Relative to the sandbox's logDirectory. */
  logPath: string
  resources?: LinuxContainerResources
  stdin?: boolean
  tty?: boolean
  seccomp?: SecurityProfile
}

/** CRI SecurityProfile: the runtime's default, none, or a profile file on the node (localhostRef, absolute). */
export interface SecurityProfile { profileType: 'RuntimeDefault' | 'Unconfined' | 'Localhost'; localhostRef?: string }

export type PodSandboxState = 'SANDBOX_READY' | 'SANDBOX_NOTREADY'
export type ContainerState = 'CONTAINER_CREATED' | 'CONTAINER_RUNNING' | 'CONTAINER_EXITED' | 'CONTAINER_UNKNOWN'

export interface PodSandbox {
  id: string
  metadata: PodSandboxMetadata
  state: PodSandboxState
  createdAt: number // nanoseconds since epoch
  labels: Record<string, string>
  annotations: Record<string, string>
  runtimeHandler: string
}

export interface PodSandboxStatus extends PodSandbox {
  network?: { ip: string; additionalIps?: string[] }
}

export interface Container {
  id: string
  podSandboxId: string
  metadata: ContainerMetadata
  image: ImageSpec
  imageRef: string
  state: ContainerState
  createdAt: number
  labels: Record<string, string>
  annotations: Record<string, string>
}

export interface ContainerStatus {
  id: string
  metadata: ContainerMetadata
  state: ContainerState
  createdAt: number // ns
  startedAt: number // ns, 0 if not started
  finishedAt: number // ns, 0 if not finished
  exitCode: number
  image: ImageSpec
  imageRef: string
  /** Brief CamelCase reason, e.g. "Completed", "Error", "OOMKilled". */
  reason: string
  message: string
  labels: Record<string, string>
  annotations: Record<string, string>
  logPath: string
  resources?: LinuxContainerResources
}

export interface ContainerFilter { id?: string; podSandboxId?: string; state?: ContainerState; labelSelector?: Record<string, string> }
export interface PodSandboxFilter { id?: string; state?: PodSandboxState; labelSelector?: Record<string, string> }

export interface ExecSyncResult { stdout: Buffer; stderr: Buffer; exitCode: number }

export interface ContainerStats {
  id: string
  timestamp: number // ns
  cpuUsageCoreNanoSeconds?: number
  memoryWorkingSetBytes?: number
  /** The container's writable layer on disk (CRI writable_layer); absent where the runtime has none (WebAssembly). */
  writableLayerBytes?: number
}

export interface VersionInfo { version: string; runtimeName: string; runtimeVersion: string; runtimeApiVersion: string }

export interface RuntimeCondition { type: string; status: boolean; reason: string; message: string }

/** CRI RuntimeService. Every method rejects with a RuntimeError. */
export interface RuntimeService {
  version(): Promise<VersionInfo>
  status(): Promise<{ conditions: RuntimeCondition[] }>

  runPodSandbox(config: PodSandboxConfig, runtimeHandler?: string): Promise<string>
  stopPodSandbox(podSandboxId: string): Promise<void>
  removePodSandbox(podSandboxId: string): Promise<void>
  podSandboxStatus(podSandboxId: string): Promise<PodSandboxStatus>
  listPodSandbox(filter?: PodSandboxFilter): Promise<PodSandbox[]>

  createContainer(podSandboxId: string, config: ContainerConfig, sandboxConfig: PodSandboxConfig): Promise<string>
  startContainer(containerId: string): Promise<void>
  /** Sends SIGTERM, then SIGKILL after `timeoutSeconds` (0 = at once). */
  stopContainer(containerId: string, timeoutSeconds: number): Promise<void>
  removeContainer(containerId: string): Promise<void>
  listContainers(filter?: ContainerFilter): Promise<Container[]>
  containerStatus(containerId: string): Promise<ContainerStatus>
  /** Throws RuntimeError code 'Unimplemented' where the runtime cannot exec (WebAssembly). */
  execSync(containerId: string, cmd: string[], timeoutSeconds: number): Promise<ExecSyncResult>
  containerStats(containerId: string): Promise<ContainerStats>
  /**
   * The URL of the runtime's streaming server for one exec, attach or port-forward session (CRI Exec, Attach,
   * PortForward); absent or 'Unimplemented' where the runtime has none.
   */
  streamingUrl?(request: StreamingRequest): Promise<string>
  /** Where the runtime reads its CNI network configuration (from its verbose status); absent without CNI. */
  cniConfDir?(): Promise<string | undefined>
  /** Makes the runtime write the container's log at its path anew after the orchlet renamed it (log rotation); absent: copy-and-truncate. */
  reopenContainerLog?(containerId: string): Promise<void>
}

/** Which standard streams a session carries (with a TTY, stderr is merged into stdout and never requested). */
export interface StreamFlags { stdin: boolean; stdout: boolean; stderr: boolean; tty: boolean }

export type StreamingRequest =
  | ({ kind: 'exec'; containerId: string; cmd: string[] } & StreamFlags)
  | ({ kind: 'attach'; containerId: string } & StreamFlags)
  | { kind: 'portforward'; podSandboxId: string; ports: number[] }

export interface Image { id: string; repoTags: string[]; repoDigests: string[]; size: number }

export interface AuthConfig { username?: string; password?: string; auth?: string; registryToken?: string }

/** CRI ImageService. */
export interface ImageService {
  listImages(filter?: { image?: ImageSpec }): Promise<Image[]>
  imageStatus(image: ImageSpec): Promise<Image | undefined>
  /** Returns the image reference (id/digest) the runtime resolved. */
  pullImage(image: ImageSpec, auth?: AuthConfig, sandboxConfig?: PodSandboxConfig): Promise<string>
  removeImage(image: ImageSpec): Promise<void>
  imageFsInfo(): Promise<{ usedBytes: number; inodesUsed: number; mountpoint: string }[]>
}

export type RuntimeErrorCode =
  | 'NotFound' | 'AlreadyExists' | 'InvalidArgument' | 'Unimplemented' | 'Unavailable'
  | 'DeadlineExceeded' | 'ImagePullFailed' | 'Internal'

/** One error type for every runtime, with a stable code (CRI's gRPC status codes map onto these). */
export class RuntimeError extends Error {
  readonly code: RuntimeErrorCode
  constructor (code: RuntimeErrorCode, message: string) {
    super(message)
    this.name = 'RuntimeError'
    this.code = code
  }
}

/** A runtime as the orchlet holds it: both services, and a close. */
export interface ContainerRuntime {
  readonly name: string
  readonly runtime: RuntimeService
  readonly images: ImageService
  close(): Promise<void>
}
