// The orchlet: wires runtimes, pod sources, the pod manager, node registration and the server from one config.

import { ensureCniConfig } from './node/cni-config.js'
import { podSandboxSettings } from './pods/pod-sandbox-settings.js'
import type { Pod } from './pods/pod-types.js'
import { LABEL_CONTAINER_NAME, LABEL_POD_NAME, LABEL_POD_NAMESPACE, LABEL_POD_UID } from './pods/container-config.js'
import { existsSync } from 'node:fs'
import { hostname } from 'node:os'
import { join } from 'node:path'
import type { OrchletConfig } from './config/types.js'
import { createApiClient, type ApiClient } from '../apiserver/client/rest-client.js'
import { setUpCertificates, type OrchletCertificates } from './node/certificates/orchlet-certificates.js'
import { capacityReport, hardEvictionBytes, nodeAddresses, readMachineFacts } from './node/node-info.js'
import { aggregateMessage, nodeImages, runtimeReadyErrors } from './node/node-images.js'
import { createNodeManager, type NodeManager } from './node/node-manager.js'
import { createEventRecorder } from './events/recorder.js'
import { createBackoff } from './pods/backoff.js'
import { createPodManager, type PodManager } from './pods/pod-manager.js'
import { createStatusManager } from './pods/status-manager.js'
import { NODE_SHUTTING_DOWN, shutdownBands, shutdownPods } from './pods/node-shutdown.js'
import { systemControllerClock, type ControllerClock } from '../apiserver/controllers/clock.js'
import { createApiSource } from './pods/sources/api-source.js'
import { createFileSource } from './pods/sources/file-source.js'
import { createUrlSource } from './pods/sources/url-source.js'
import type { PodSourceRunner } from './pods/sources/source.js'
import { createAgentServer, type AgentServer } from './server/agent-server.js'
import { createAuthenticator } from './server/authn.js'
import { createAuthorizer } from './server/authz.js'
import { loadServingTls } from './server/tls.js'
import { configzOf } from './server/configz.js'
import { OrchletMetrics } from './metrics/orchlet-metrics.js'
import { createResourceMetrics } from './metrics/resource-metrics.js'
import { instrumentRuntime } from './metrics/instrumented-runtime.js'
import { RuntimeError, type ContainerRuntime } from './runtime/runtime.js'
import { createWasmRuntime, RUNTIME_HANDLER as WASM_HANDLER, type WasmRuntime } from './runtime/wasm/runtime.js'
import { tracedRuntime } from './runtime/traced-runtime.js'
import { parseCriEndpoint } from './runtime/cri/endpoint.js'
import { readFileSync } from 'node:fs'
import { watchImportDir } from './runtime/image-import-dir.js'
import { createNodeEviction } from './eviction/node-eviction.js'
import { createNodeGc, imageFsMountpoint } from './gc/node-gc.js'
import { cgroupsForWorkers, setUpNodeCgroups } from './cgroups/node-cgroups.js'
import type { EvictionManager } from './eviction/eviction-manager.js'

export interface AgentLogger {
  info (obj: object | string, msg?: string): void
  warn (obj: object | string, msg?: string): void
  error (obj: object | string, msg?: string): void
}

export interface RunningAgent {
  readonly nodeName: string
  readonly pods: PodManager
  readonly wasm: WasmRuntime
  ports(): { port?: number; readOnlyPort?: number; healthzPort?: number }
  /**
   * For --runonce: resolves once every local pod is running or has finished (or `timeoutMs` passed),
   * with one line per pod and whether all of them started.
   */
  podsStarted (timeoutMs: number): Promise<{ ok: boolean; lines: string[] }>
  /**
   * Stops the agent. Pods keep running in CRI runtimes (as with the kubelet); in-process WebAssembly pods end.
   * `stopPods`: every pod stopped (runonce). `shutdown`: a node shutdown (SIGTERM). With shutdownGracePeriod (or
   * shutdownGracePeriodByPodPriority) set, the Node turns not Ready and every pod is stopped, regular pods first,
   * then critical ones; without, only the WebAssembly pods, which die with this process, are. Pods stopped either
   * way are reported Failed with the kubelet's node-shutdown reason.
   */
  stop (opts?: { stopPods?: boolean, shutdown?: boolean }): Promise<void>
}

export interface AgentDeps {
  logger: AgentLogger
  now?: () => number
  /** Restart back-off; defaults to the kubelet's 10s doubling to 5m. */
  backoff?: { initialMs: number; maxMs: number }
  /** Pod relist period (default 1s). */
  relistMs?: number
  /** Times the node shutdown's bands (default: the system clock). */
  clock?: ControllerClock
}

const ORCHLET_VERSION = 'v1.29.0-orch'

function unixSocketExists (endpoint: string): boolean {
  try {
    const target = parseCriEndpoint(endpoint)
    return !target.startsWith('unix:') || existsSync(target.slice('unix:'.length).replace(/^\/\/+/, '/'))
  } catch { return false }
}

async function openCriRuntime (config: OrchletConfig, logger: AgentLogger): Promise<ContainerRuntime | undefined> {
  const endpoint = config.containerRuntimeEndpoint
  if (endpoint === '' || !unixSocketExists(endpoint)) {
    logger.warn({ endpoint }, 'container runtime endpoint not reachable; only WebAssembly pods (runtimeClassName: wasm) can run')
    return undefined
  }
  const opts = { runtimeEndpoint: endpoint, imageEndpoint: config.imageServiceEndpoint || endpoint, requestTimeoutMs: config.runtimeRequestTimeout }
  // The CRI client (gRPC, protobufjs and the CRI definitions) is loaded only when there is a socket to talk to.
  const { createCriRuntime } = await import('./runtime/cri/cri-runtime.js')
  const probe = createCriRuntime(opts)
  try {
    const v = await probe.runtime.version()
    await probe.close()
    logger.info({ runtime: v.runtimeName, version: v.runtimeVersion }, 'connected to container runtime')
    return createCriRuntime({ ...opts, name: v.runtimeName })
  } catch (err) {
    await probe.close()
    logger.warn({ endpoint, err: (err as Error).message }, 'container runtime did not answer; only WebAssembly pods can run')
    return undefined
  }
}

export async function runAgent (config: OrchletConfig, deps: AgentDeps): Promise<RunningAgent> {
  const { logger } = deps
  const now = deps.now ?? Date.now
  const nodeName = (config.hostnameOverride || hostname()).toLowerCase()
  const rootDir = config.rootDir
  const facts = readMachineFacts(rootDir)
  // Without --node-ip, a server bound to one address is reached there: the node's InternalIP must agree with it
  // (the API server reaches logs, exec and proxy through the node's address and daemonEndpoints port).
  const bound = config.address !== '' && config.address !== '0.0.0.0' && config.address !== '::' ? [config.address] : []
  const addresses = nodeAddresses(config.nodeIP.length > 0 ? config.nodeIP : bound, nodeName)
  const hostIP = addresses.find(a => a.type === 'InternalIP')?.address ?? '127.0.0.1'

  // The recorder is made below; a warning arriving before it exists is only logged.
  let warn: ((labels: Record<string, string>, reason: string, message: string) => void) | undefined
  const wasm = await createWasmRuntime({
    rootDir: join(rootDir, 'wasm'),
    now,
    onContainerWarning: (labels, reason, message) => { if (warn !== undefined) warn(labels, reason, message); else logger.warn({ reason }, message) }
  })
  // Offline appliances: OCI layouts dropped in <root-dir>/wasm/import are imported into the wasm image store.
  // The first scan runs before the event recorder exists: its failures wait for it.
  const earlyImportFailures: string[] = []
  let importFailed = (message: string): void => { earlyImportFailures.push(message) }
  const imports = watchImportDir({
    dir: join(rootDir, 'wasm', 'import'), importer: wasm.images, checkFrequencyMs: config.fileCheckFrequency, logger,
    onFailure: (_path, message) => importFailed(message)
  })
  await imports.scan()
  const cri = await openCriRuntime(config, logger)
  // OrchletTracing with a `tracing` configuration: pod syncs and the CRI calls they make become spans.
  // OpenTelemetry (and its gRPC exporter) is loaded only when tracing is on.
  const tracing = config.tracing !== null && config.featureGates.enabled('OrchletTracing') ? (await import('../apiserver/tracing/tracing.js')).createTracing({ ...config.tracing, serviceName: 'orchlet' }) : undefined
  // The orchlet's metrics: every CRI call of both runtimes is counted and timed (kubelet_runtime_operations_*).
  const metrics = new OrchletMetrics({ showHiddenMetricsForVersion: config.showHiddenMetricsForVersion || undefined })
  const observeRuntime = (op: string, seconds: number, failed: boolean): void => metrics.runtimeOperation(op, seconds, failed)
  const wrap = (rt: ContainerRuntime): ContainerRuntime => instrumentRuntime(tracing === undefined ? rt : tracedRuntime(rt, tracing), observeRuntime)
  const runtimes = new Map<string, ContainerRuntime>([[WASM_HANDLER, wrap(wasm)]])
  if (cri !== undefined) runtimes.set('', wrap(cri))
  if (cri !== undefined) await ensureCniConfig({ runtime: cri.runtime, podCIDR: config.podCIDR, logger })
  const runtimeFor = (handler: string): ContainerRuntime => {
    const r = runtimes.get(handler)
    if (r === undefined) throw new RuntimeError('NotFound', handler === '' ? 'no container runtime is connected (see --container-runtime-endpoint); use runtimeClassName: wasm' : `no runtime handler "${handler}" on this node`)
    return r
  }

  // A pod naming no RuntimeClass runs on WebAssembly when all its images are WebAssembly images in the local
  // store, or when no CRI runtime is connected: `kubectl create deployment --image=<wasm image>` works as is.
  const handlerFor = (pod: Pod): string => {
    const named = pod.spec.runtimeClassName ?? ''
    if (named !== '') return named
    const images = [...(pod.spec.initContainers ?? []), ...pod.spec.containers].map(c => c.image)
    if (cri === undefined || images.every(i => wasm.images.resolve(i) !== undefined)) return WASM_HANDLER
    return ''
  }

  let client: ApiClient | undefined
  let certificates: OrchletCertificates | undefined
  if (!config.standalone) {
    // --bootstrap-orchconfig, --rotate-certificates and --rotate-server-certificates (agent/node/certificates/).
    certificates = await setUpCertificates({
      config,
      nodeName,
      logger,
      makeClient: connection => createApiClient({
        connection,
        qps: config.orchAPIQPS,
        burst: config.orchAPIBurst,
        contentType: config.contentType,
        userAgent: `orchlet/${ORCHLET_VERSION} (linux) ${nodeName}`
      })
    })
    client = certificates.client
  }

  const statusManager = client ? createStatusManager({ client, nodeName, logger }) : undefined
  // Without an API server (standalone) the recorder logs events instead of writing them. 0 selects client-go's defaults (5 qps, burst 10).
  const recorder = createEventRecorder({ client, component: 'orchlet', host: nodeName, qps: config.eventRecordQPS > 0 ? config.eventRecordQPS : 5, burst: config.eventBurst > 0 ? config.eventBurst : 10, logger, now })
  importFailed = message => { recorder.event({ kind: 'Node', name: nodeName, uid: nodeName }, 'Warning', 'ImageImportFailed', message) }
  for (const m of earlyImportFailures.splice(0)) importFailed(m)
  warn = (labels, reason, message) => {
    logger.warn({ pod: labels[LABEL_POD_NAME], reason }, message)
    recorder.event({ kind: 'Pod', apiVersion: 'v1', namespace: labels[LABEL_POD_NAMESPACE], name: labels[LABEL_POD_NAME], uid: labels[LABEL_POD_UID],
      fieldPath: `spec.containers{${labels[LABEL_CONTAINER_NAME]}}` }, 'Warning', reason, message)
  }
  // The eviction manager is made once the pod manager exists; until then every pod is admitted.
  let eviction: EvictionManager | undefined
  // agent/cgroups/: the QoS hierarchy; containerd pods get their pod cgroup as the sandbox's cgroup parent.
  // --qos-reserved counts the active pods, known once the pod manager exists (none before).
  let activePods: () => Pod[] = () => []
  const podCgroups = cri === undefined ? undefined : setUpNodeCgroups({ config, capacity: facts, logger, activePods: () => activePods() })
  const pods = createPodManager({
    cgroups: cgroupsForWorkers(podCgroups, WASM_HANDLER, logger),
    admitPod: pod => eviction?.admit(pod) ?? { admit: true },
    nodeName,
    maxPods: config.maxPods,
    runtimeFor,
    handlerFor,
    rootDir,
    logsRoot: join(rootDir, 'logs', 'pods'),
    hostIP,
    client,
    cpuCfsQuota: config.cpuCFSQuota,
    ...podSandboxSettings({ clusterDNS: config.clusterDNS, clusterDomain: config.clusterDomain, resolvConf: config.resolvConf, nodeIPs: [hostIP], allowedUnsafeSysctls: config.allowedUnsafeSysctls, seccompDefault: config.seccompDefault, rootDir }),
    cfsPeriodUs: Math.round(config.cpuCFSQuotaPeriod * 1000),
    backoff: createBackoff({ initialMs: deps.backoff?.initialMs ?? 10_000, maxMs: deps.backoff?.maxMs ?? 300_000, now }),
    now,
    logger,
    relistMs: deps.relistMs ?? 1000,
    tracing,
    statusManager,
    recorder,
    runtimes: () => [...runtimes.values()],
    onPodStarted: seconds => metrics.podStarted(seconds),
    onProbeResult: r => metrics.probed(r),
    expectedSources: [
      ...(config.staticPodPath ? ['file' as const] : []),
      ...(config.staticPodURL ? ['http' as const] : []),
      ...(client && !config.runOnce ? ['api' as const] : [])
    ]
  })

  activePods = () => pods.active()
  // The kubelet's periodic QoS cgroup update (every minute), besides the updates as pods come and go.
  const qosTimer = podCgroups !== undefined && !config.runOnce
    ? setInterval(() => { try { podCgroups.updateTiers() } catch (err) { logger.warn({ err: (err as Error).message }, 'updating the QoS cgroups failed') } }, 60_000)
    : undefined
  qosTimer?.unref()
  const sources: PodSourceRunner[] = []
  if (config.staticPodPath) sources.push(createFileSource({ path: config.staticPodPath, nodeName, checkFrequencyMs: config.fileCheckFrequency, sink: pods.sink, logger }))
  if (config.staticPodURL) sources.push(createUrlSource({ url: config.staticPodURL, headers: config.staticPodURLHeader, nodeName, checkFrequencyMs: config.httpCheckFrequency, sink: pods.sink, logger }))

  let node: NodeManager | undefined
  // agent/gc/: image and dead-container GC, also the eviction manager's node-level reclaim.
  const gc = createNodeGc({
    config, now, logger, runtimes: () => [...runtimes.values()], isActivePod: uid => pods.workers().has(uid),
    onFailure: (reason, message) => recorder.event({ kind: 'Node', name: nodeName, uid: nodeName }, 'Warning', reason, message)
  })
  if (!config.runOnce) gc.start()
  // agent/eviction/: thresholds against the node's real signals; a pressure change posts the node status at once.
  eviction = createNodeEviction({
    config, now, recorder, logger, pods, reclaimImages: gc.reclaimImages, reclaimContainers: gc.reclaimContainers,
    imageDir: await imageFsMountpoint(cri ?? wasm),
    allocatableMemoryBytes: facts.memoryBytes - (config.orchReserved.memory ?? 0) - (config.systemReserved.memory ?? 0),
    statsSummary: pods.view.statsSummary as () => Promise<{ pods: Array<Record<string, unknown>> }>,
    onEvicted: signal => metrics.evicted(signal),
    podsMemcgDir: podCgroups?.podsMemoryDir(),
    onConditionsChanged: () => { void node?.postStatus().catch(err => logger.warn({ err: (err as Error).message }, 'posting the node status after a pressure change failed')) }
  })
  if (!config.runOnce) eviction.start(10_000, 1_000)
  const shutdownBandList = shutdownBands(config)
  // Set once a graceful node shutdown starts: the Node's Ready condition says so from then on.
  let shuttingDown = false
  const shutdown = async (): Promise<void> => {
    if (shutdownBandList.length > 0) {
      shuttingDown = true
      logger.info({ bands: shutdownBandList }, 'node shutting down; stopping pods')
      recorder.event({ kind: 'Node', name: nodeName, uid: nodeName }, 'Normal', 'Shutdown', 'Shutdown manager detected shutdown event')
      await node?.postStatus().catch(err => logger.warn({ err: (err as Error).message }, 'posting the shutting-down node status failed'))
    }
    await shutdownPods(pods, { bands: shutdownBandList, diesWithProcess: pod => handlerFor(pod) === WASM_HANDLER, clock: deps.clock ?? systemControllerClock, logger })
  }
  let server: AgentServer | undefined
  const tls = config.enableServer
    ? await loadServingTls({ certDir: config.certDir, tlsCertFile: config.tlsCertFile, tlsPrivateKeyFile: config.tlsPrivateKeyFile, tlsMinVersion: config.tlsMinVersion, tlsCipherSuites: config.tlsCipherSuites, nodeName, addresses: addresses.map(a => a.address) })
    : undefined
  metrics.podManagerFamilies(() => pods.metrics())
  const resourceMetrics = createResourceMetrics({ summary: async () => await pods.view.statsSummary(), pods: () => pods.view.pods(), now })
  // The kubelet's four Prometheus endpoints, each its own registry.
  const metricEndpoints = new Map<string, () => Promise<string>>([
    ['/metrics', async () => await metrics.main.text()],
    ['/metrics/probes', async () => await metrics.probes.text()],
    ['/metrics/resource', async () => await resourceMetrics.resource.text()],
    ['/metrics/cadvisor', async () => await resourceMetrics.cadvisor.text()]
  ])
  server = createAgentServer({
    view: pods.view,
    nodeName,
    address: config.address,
    port: config.port,
    readOnlyPort: config.readOnlyPort,
    healthzBindAddress: config.healthzBindAddress,
    healthzPort: config.healthzPort,
    enableServer: config.enableServer,
    enableDebuggingHandlers: config.enableDebuggingHandlers,
    tls,
    clientCaPem: config.clientCAFile ? readFileSync(config.clientCAFile) : undefined,
    authenticate: createAuthenticator({
      anonymous: config.anonymousAuth,
      clientCertificates: Boolean(config.clientCAFile),
      tokenWebhook: config.authenticationTokenWebhook && client ? { client, cacheTtlMs: config.authenticationTokenWebhookCacheTTL } : undefined,
      now
    }),
    authorize: createAuthorizer(config.authorizationMode === 'Webhook' && client
      ? { mode: 'Webhook', webhook: { client, authorizedTtlMs: config.authorizationWebhookCacheAuthorizedTTL, unauthorizedTtlMs: config.authorizationWebhookCacheUnauthorizedTTL }, now }
      : { mode: 'AlwaysAllow', now }),
    logger,
    configz: () => configzOf(config),
    metrics: metricEndpoints
  })
  await server.start()
  if (config.enableServer) certificates?.serve(server, addresses)
  const ports = server.ports()

  if (client && !config.runOnce) {
    // The kubelet's hardEvictionReservation: hard memory.available and nodefs.available thresholds leave allocatable.
    const ignoreEviction = config.experimentalAllocatableIgnoreEviction
    const reserved = {
      orchReserved: config.orchReserved,
      systemReserved: config.systemReserved,
      evictionHardMemoryBytes: ignoreEviction ? 0 : hardEvictionBytes(config.evictionHard, 'memory.available', facts.memoryBytes),
      evictionHardEphemeralStorageBytes: ignoreEviction ? 0 : hardEvictionBytes(config.evictionHard, 'nodefs.available', facts.ephemeralStorageBytes)
    }
    const healthRuntime = cri ?? wasm
    node = createNodeManager({
      client,
      spec: { nodeName, labels: config.nodeLabels, taints: config.registerWithTaints, providerID: config.providerID || undefined, podCIDR: config.podCIDR || undefined, unschedulable: !config.registerSchedulable, controllerManagedAttachDetach: config.enableControllerAttachDetach },
      facts,
      registerNode: config.registerNode,
      statusUpdateFrequencyMs: config.nodeStatusUpdateFrequency,
      leaseDurationSeconds: 40,
      statusInput: async () => ({
        facts,
        capacity: capacityReport(facts, config.maxPods, reserved),
        addresses,
        runtimeVersion: cri ? `${cri.name}://${(await cri.runtime.version()).runtimeVersion}` : `wasm://${(await wasm.runtime.version()).runtimeVersion}`,
        orchletVersion: ORCHLET_VERSION,
        port: ports.port ?? config.port,
        images: nodeImages((await Promise.all([...runtimes.values()].map(r => r.images.listImages().catch(() => [])))).flat(), config.nodeStatusMaxImages)
      }),
      health: async () => {
        const st = await healthRuntime.runtime.status().catch(() => undefined)
        const errs = [...runtimeReadyErrors(st), ...(shuttingDown ? [NODE_SHUTTING_DOWN] : [])]
        return { ready: errs.length === 0, readyMessage: aggregateMessage(errs), memoryPressure: eviction?.has('MemoryPressure') ?? false, diskPressure: eviction?.has('DiskPressure') ?? false, pidPressure: eviction?.has('PIDPressure') ?? false }
      },
      now,
      logger,
      recorder
    })
    await node.register()
    node.start()
    sources.push(createApiSource({ client, nodeName, sink: pods.sink, logger }))
  }
  for (const s of sources) s.start()
  logger.info({ node: nodeName, standalone: config.standalone, ...ports }, 'orchlet started')

  return {
    nodeName,
    pods,
    wasm,
    ports: () => ports,
    async podsStarted (timeoutMs) {
      for (const s of sources) await s.refresh()
      const deadline = now() + timeoutMs
      const started = (): boolean => [...pods.workers().values()].every(w => {
        const st = w.status()
        return st !== undefined && (st.phase === 'Succeeded' || st.phase === 'Failed' || (st.containerStatuses ?? []).every(c => c.state.running !== undefined))
      })
      while (!started() && now() < deadline) await new Promise(resolve => setTimeout(resolve, 100))
      const lines = [...pods.workers().values()].map(w => {
        const st = w.status()
        const m = w.pod().metadata
        const waiting = st?.containerStatuses?.map(c => c.state.waiting).find(w => w?.reason !== undefined && w.reason !== 'ContainerCreating')
        const why = st?.message ?? (waiting ? `${waiting.reason}: ${waiting.message ?? ''}` : '')
        return `${m.namespace}/${m.name}: ${st?.phase ?? 'Pending'}${why ? ` (${why})` : ''}`
      })
      const ok = started() && [...pods.workers().values()].every(w => w.status()?.phase !== 'Failed')
      return { ok, lines }
    },
    async stop (opts = {}) {
      certificates?.stop()
      await eviction?.stop()
      if (qosTimer !== undefined) clearInterval(qosTimer)
      gc.stop()
      for (const s of sources) s.stop()
      imports.stop()
      // A shutdown keeps the node's heartbeat and the server up while pods stop, as the kubelet's does.
      if (opts.shutdown === true && opts.stopPods !== true) await shutdown()
      await node?.stop()
      await server?.close()
      if (opts.stopPods === true) await pods.stopAll()
      await statusManager?.flush()
      recorder.stop()
      await recorder.flush()
      await client?.close()
      await cri?.close()
      await wasm.close()
      await tracing?.shutdown()
    }
  }
}
