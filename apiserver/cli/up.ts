// `orch up` / `orch apiserver`: opens the store, starts the registry and the HTTP server, writes the kubeconfig, shuts down on signals.

import { mkdir, rm } from 'node:fs/promises'
import { hostname } from 'node:os'
import { join, resolve } from 'node:path'
import type { Logger } from 'pino'
import { createApiServer, type ApiServer, type ApiServerOptions } from '../server.js'
import { createRegistry } from '../registry/registry.js'
import { selectorIndexer } from '../registry/selector-index.js'
import { openLmdbStore } from '../storage/lmdb/index.js'
import { electedWorkloads } from './elected-workloads.js'
import type { EtcdOptions } from './etcd-flags.js'
import { buildOpenAPIv2, buildOpenAPIv3GroupVersion } from '../schema/openapi.js'
import type { Store } from '../storage/store.js'
import type { Registry } from '../registry/types.js'
import { buildAuthentication, nodeKubeconfigPath, prepareSecurity, writeClientKubeconfig } from './security.js'
import type { SecurityOptions } from './security-flags.js'
import type { AuditOptions } from './audit-flags.js'
import type { AuthnConfigOptions } from './authn-config-flags.js'
import type { AdmissionOptions } from '../admission/build.js'
import type { FeatureGates } from '../featuregate/featuregate.js'
import { setUpAdmission, type AdmissionSetup } from './admission-setup.js'
import { defaultAdmission } from './admission-flags.js'
import { openStructuredAuth, structuredAuthRequested, type OpenedStructuredAuth } from './structured-auth.js'
import { openAuditor } from '../audit/open.js'
import type { Auditor } from '../audit/auditor.js'
import { registryDeprecations } from '../endpoints/audit.js'
import { createAuthorizationStack, type RunningAuthorization } from '../auth/authorization-stack.js'
import type { AuthorizationMode } from '../auth/authorizer.js'
import type { Authorizer } from '../auth/types.js'
import { buildRuleResolver } from '../auth/rule-resolvers.js'
import { bootstrapTokenAuthenticator, registrySecretLookup } from '../auth/bootstrap-tokens.js'
import { signerPermission } from '../auth/signer-permission.js'
import type { ServerPki } from '../pki/data-dir.js'
import { registryUidLookup } from '../registry/object-uids.js'
import { prepareLocalNode, startLocalNode, writeLocalNodeCredentials, type LocalNodeOptions } from './local-node.js'
import { createSandboxPool } from '../../sandbox/pool.js'
import { lazyCelRules } from '../registry/cel-rules.js'
import { startStorageSpaceEvents, type StorageSpaceEvents } from '../registry/storage-space-events.js'
import type { RunningAgent } from '../../agent/agent.js'
import { startControllerManager } from '../controllers/manager.js'
import { createSummaryScraper } from '../metrics-api/summary-scraper.js'
import { withResourceMetrics } from '../metrics-api/metrics-registry.js'
import { inProcessClient } from '../controllers/client/in-process.js'
import { startScheduler } from '../scheduler/run.js'
import { ApiServerIdentity } from '../controllers/apiserver-identity.js'
import { ApiServerLeaseGc } from '../controllers/apiserver-lease-gc.js'
import { systemControllerClock } from '../controllers/clock.js'
import { controllerSettingsOf } from './components.js'
import { concurrencyOf, type LoadedConfig } from './cm-config/load.js'
import type { TracingSettings } from '../tracing/config.js'
import type { EgressSettings } from '../egress/config.js'
import { createEgress, type Egress } from '../egress/egress.js'
import { tracedAdmission, tracedAuthenticator, tracedAuthorizer, tracedStore } from '../tracing/traced.js'
import { builtinDefinitions, builtinGroupVersions } from '../schema/builtin/catalog.js'
import { parseRuntimeConfig } from '../schema/builtin/runtime-config.js'
import { apiServerMetrics, collectStorageGauges, timedStore } from './metrics-setup.js'
import { serveComponents } from './component-server.js'
import { ComponentMetrics } from '../metrics/component-metrics.js'
import { SchedulerMetrics } from '../metrics/scheduler-metrics.js'
import { SERVED_MINOR } from '../endpoints/version.js'
import { DeprecatedApisGauge } from '../endpoints/deprecated-apis-metric.js'

export interface UpOptions {
  dataDir: string
  port: number
  bindAddress: string
  logger: Logger
  /** Run an orchlet for this machine (`orch up`); `orch apiserver` runs the API server alone. */
  localNode?: Omit<LocalNodeOptions, 'dataDir' | 'kubeconfigPath' | 'logger'>
  /** Threads evaluating CRD validation rules (default: the number of cores). */
  celWorkers?: number
  /** Serve the `*.orch.io` groups under their Kubernetes names too (default true). */
  upstreamAliases?: boolean
  /** --runtime-config: built-in group versions and resources turned on or off (schema/builtin/runtime-config.ts). */
  runtimeConfig?: string
  /** Request timeout, in-flight caps and the connection cap of the API server (defaults as kube-apiserver's). */
  limits?: Pick<ApiServerOptions, 'requestTimeoutMs' | 'inflight' | 'maxConnections' | 'minRequestTimeoutMs' | 'livezGracePeriodMs'>
  /** --shutdown-delay-duration: on stop, /readyz fails at once and requests are still served this long (default 0). */
  shutdownDelayMs?: number
  /** --show-hidden-metrics-for-version: show the metrics deprecated in the previous minor release (only it is accepted). */
  showHiddenMetricsForVersion?: string
  /** Plain HTTP ports of the in-process controller manager's and scheduler's /healthz and /metrics (0 or absent: off). */
  componentPorts?: { controllerManager?: number, scheduler?: number }
  /** Run the controller manager and the scheduler in process (default true; `orch apiserver` runs neither). */
  controllers?: boolean
  /** `--controllers` of `orch up` (default: all). */
  controllerList?: string[]
  /** --controller-manager-config, read and checked: an OrchControllerManagerConfiguration for the in-process controllers. */
  controllerManagerConfig?: LoadedConfig['config']
  /** NodeLifecycleController.NodeMonitorGracePeriod (default 40 s). */
  nodeMonitorGracePeriodMs?: number
  /** The store's space: quota (0 = the disk), reserve, and whether a full store fails /readyz (else informational). */
  storage?: { quotaBytes?: number; reserveBytes?: number; readyzFailOnFull?: boolean }
  /** TLS, authentication and authorization (the flags of security-flags.ts). */
  security: SecurityOptions
  /** --authentication-config, --oidc-*, --authorization-config (authn-config-flags.ts). */
  structuredAuth?: AuthnConfigOptions
  /** --feature-gates of the API server. */
  featureGates?: FeatureGates
  /** --enable-admission-plugins, --disable-admission-plugins, --admission-control-config-file (default: defaultAdmission()). */
  admission?: AdmissionOptions
  /** --tracing-config-file: a span per request exported over OTLP/gRPC; no tracing without. */
  tracing?: TracingSettings
  /** --egress-selector-config-file: how outbound connections leave (webhooks and orchlets are `cluster`); direct without. */
  egress?: EgressSettings
  /** --audit-policy-file, --audit-log-* (audit-flags.ts); no auditing without. */
  audit?: AuditOptions
  /** --etcd-servers & co.: store in etcd instead of LMDB in DIR/store. */
  etcd?: EtcdOptions
}

/** The controller manager and the scheduler on one set of informers, talking to the registry in process. */
function startWorkloads (registry: Registry, logger: Logger, o: UpOptions, pki: ServerPki, authorizer: Authorizer): Workloads {
  const config = o.controllerManagerConfig ?? {}
  const version = `1.${SERVED_MINOR}`
  const metrics = {
    controllerManager: new ComponentMetrics({ version, showHiddenMetricsForVersion: o.showHiddenMetricsForVersion }),
    scheduler: new ComponentMetrics({ version, showHiddenMetricsForVersion: o.showHiddenMetricsForVersion })
  }
  const fromConfig = controllerSettingsOf(config)
  const cm = startControllerManager({
    client: inProcessClient(registry, 'orch-controller-manager'),
    logger: logger.child({ component: 'controller-manager' }),
    controllers: o.controllerList ?? config.Generic?.Controllers,
    concurrency: concurrencyOf(config),
    settings: {
      ...fromConfig,
      nodeMonitorGracePeriodMs: o.nodeMonitorGracePeriodMs ?? fromConfig.nodeMonitorGracePeriodMs,
      rootCABundle: pki.servingCaPem,
      csrSigning: { ca: pki.ca },
      csrApprovalAuthorizer: authorizer
    },
    metrics: metrics.controllerManager
  })
  const scheduler = startScheduler({ client: inProcessClient(registry, 'orch-scheduler'), logger: logger.child({ component: 'scheduler' }), informers: cm.informers, metrics: new SchedulerMetrics(metrics.scheduler) })
  return { metrics, stop () { scheduler.stop(); cm.stop() } }
}

interface Workloads { metrics: { controllerManager: ComponentMetrics, scheduler: ComponentMetrics }, stop(): void }

/** The in-process components' health and metrics ports, when asked for; the returned stop closes them too. */
async function serveWorkloads (w: Workloads, o: UpOptions, logger: Logger): Promise<{ stop(): void }> {
  const servers = await serveComponents([
    { name: 'controller-manager', port: o.componentPorts?.controllerManager, metrics: w.metrics.controllerManager },
    { name: 'scheduler', port: o.componentPorts?.scheduler, metrics: w.metrics.scheduler }
  ], o.bindAddress, logger).catch((err: unknown) => { w.stop(); throw err })
  return { stop () { w.stop(); for (const s of servers) s.close() } }
}

export interface ControlPlane {
  server: ApiServer
  /** The address clients use (https://host:port). */
  url: string
  kubeconfigPath: string
  /** Drains and stops everything: readyz fails, watches end, store flushed. Idempotent. */
  stop(): Promise<void>
}

/** Host for the kubeconfig: a wildcard bind is reached through loopback. */
function clientHost (bind: string): string {
  if (bind === '0.0.0.0' || bind === '') return '127.0.0.1'
  if (bind === '::') return '[::1]'
  return bind.includes(':') ? `[${bind}]` : bind
}

/** LMDB in DIR/store, or etcd with --etcd-servers (its gRPC client and protobuf definitions are loaded only then). */
async function openStore (o: UpOptions, egress: Egress): Promise<Store> {
  if (o.etcd !== undefined) {
    const { openEtcdBackend } = await import('./etcd-backend.js')
    return await openEtcdBackend(o.etcd, o.logger, egress, { consistentListFromCache: o.featureGates?.enabled('ConsistentListFromCache') === true })
  }
  return await openLmdbStore({ path: join(o.dataDir, 'store'), logger: o.logger, quotaBytes: o.storage?.quotaBytes, reserveBytes: o.storage?.reserveBytes, indexer: selectorIndexer })
}

export async function startControlPlane (options: UpOptions): Promise<ControlPlane> {
  // Absolute from here on: paths written into the generated orchlet configuration resolve against its own folder.
  const o: UpOptions = { ...options, dataDir: resolve(options.dataDir) }
  const { logger } = o
  const kubeconfigPath = join(o.dataDir, 'kubeconfig')
  // Every configuration is checked before anything listens or writes a file.
  const metrics = apiServerMetrics(o.showHiddenMetricsForVersion)
  const orchconfigPath = nodeKubeconfigPath(o.dataDir)
  const egress = createEgress(o.egress)
  const prepared = o.localNode === undefined ? undefined : await prepareLocalNode({ dataDir: o.dataDir, kubeconfigPath: orchconfigPath, logger, ...o.localNode })
  await mkdir(o.dataDir, { recursive: true })
  const security = await prepareSecurity(o.dataDir, o.bindAddress, o.security, o.localNode?.nodeIP === undefined ? [] : [o.localNode.nodeIP])
  // A kubeconfig from an earlier run names an old port: remove it so it appears only once we serve.
  await rm(kubeconfigPath, { force: true })
  const store: Store = timedStore(metrics, await openStore(o, egress))
  let registry: Registry | undefined
  let server: ApiServer | undefined
  let workloads: { stop(): void } | undefined
  let spaceEvents: StorageSpaceEvents | undefined
  let authz: RunningAuthorization | undefined
  let auditor: Auditor | undefined
  let structured: OpenedStructuredAuth | undefined
  let admission: AdmissionSetup | undefined
  // CEL rules run on a pool of sandbox threads, made when the first CRD with validation rules needs it.
  const cel = lazyCelRules(() => createSandboxPool({ size: o.celWorkers, limits: { deadlineMs: 250 } }))
  // OpenTelemetry and its gRPC exporter are loaded only when tracing is configured: most servers never trace.
  const tracing = o.tracing === undefined ? undefined : (await import('../tracing/tracing.js')).createTracing({ ...o.tracing, serviceName: 'apiserver' })
  try {
    // Tokens are checked against the objects they are bound to, in the registry the reviews live in: hence the getter.
    let built: Registry | undefined
    const bootstrapTokens = o.security.bootstrapTokenAuth
      ? [bootstrapTokenAuthenticator(async name => await registrySecretLookup(built!)(name), Date.now, why => logger.debug({ why }, 'bootstrap token refused'))]
      : []
    structured = structuredAuthRequested(o.structuredAuth)
      ? await openStructuredAuth(o.structuredAuth, o.security.serviceAccountIssuers, logger, () => authz, tls => egress.dispatcher('controlplane', tls))
      : undefined
    const jwt = structured?.jwt === undefined ? [] : [structured.jwt]
    const authn = await buildAuthentication(security, registryUidLookup(() => built!, () => Date.now()), [...bootstrapTokens, ...jwt])
    // With --authorization-config both RBAC and Node run (and NodeRestriction), for the configured chain to name them.
    // (Webhook modes are in the configured chain, which then decides.)
    const modes: AuthorizationMode[] = o.structuredAuth?.authorizationConfigFile !== undefined
      ? ['Node', 'RBAC']
      : o.security.authorizationModes.filter(m => m !== 'Webhook')
    // The RBAC and Node authorizers watch the registry, whose reviews and write checks ask them: built in two steps.
    const adm = admission = setUpAdmission({
      options: o.admission ?? defaultAdmission(), registry: () => built!, authorizer: { authorize: async a => await authorizer.authorize(a) }, logger, celWorkers: o.celWorkers,
      featureGates: o.featureGates, outboundHeaders: tracing === undefined ? undefined : () => tracing.outboundHeaders(),
      dispatcher: tls => egress.dispatcher('cluster', tls)
    })
    const stack = createAuthorizationStack(modes, { nodeRestriction: adm.nodeRestriction })
    const configured = structured?.authorizer
    const authorizer: Authorizer = { authorize: async a => await (configured ?? authz!.authorizer).authorize(a) }
    const validating = [...stack.admission, ...adm.validating]
    registry = createRegistry({
      store: tracing === undefined ? store : tracedStore(store, tracing),
      logger,
      celRules: cel,
      upstreamAliases: o.upstreamAliases,
      watchList: o.featureGates?.enabled('WatchList') === true,
      definitions: builtinDefinitions(parseRuntimeConfig(o.runtimeConfig ?? '', builtinGroupVersions())),
      ...adm.registryOptions,
      authenticator: authn.authenticator,
      apiAudiences: o.security.apiAudiences,
      authorizer,
      ruleResolver: buildRuleResolver(modes, () => ({ rulesFor: async (user, ns) => await authz!.ruleResolver.rulesFor(user, ns) })),
      ...(tracing === undefined ? { admission: validating } : {
        admission: tracedAdmission('validating', validating, tracing),
        mutatingAdmission: tracedAdmission('mutating', adm.registryOptions.mutatingAdmission, tracing)
      }),
      tokenIssuer: authn.serviceAccountTokens,
      maxTokenExpirationSeconds: o.security.maxTokenExpirationSeconds,
      signerPermission: signerPermission(authorizer)
    })
    built = registry
    const orchletTls = { certPem: security.pki.orchletClient.certPem, keyPem: security.pki.orchletClient.keyPem, caPem: security.pki.ca.certPem }
    // The resource metrics API (kubectl top, the HPA controller): the orchlets' summaries, served beside the stored kinds.
    const metricsSource = createSummaryScraper({ registry, tls: orchletTls, logger })
    const served = withResourceMetrics(registry, metricsSource, { upstreamAliases: o.upstreamAliases })
    const started = authz = stack.start(registry, logger)
    if (o.audit !== undefined) auditor = await openAuditor(o.audit, logger, { deprecatedApi: registryDeprecations(registry) })
    let registryStarted = false
    const startRegistry = registry.start().then(() => { registryStarted = true })
    collectStorageGauges(metrics, () => built, store)
    server = createApiServer({
      registry: served,
      logger,
      metrics,
      deprecatedApis: new DeprecatedApisGauge(metrics.base.registry),
      ...o.limits,
      openapi: { v2: buildOpenAPIv2, v3GroupVersion: buildOpenAPIv3GroupVersion },
      tls: security.tls,
      audit: auditor,
      orchletTls,
      authentication: tracing === undefined ? authn.authenticator : tracedAuthenticator(authn.authenticator, tracing),
      authorization: tracing === undefined ? authorizer : tracedAuthorizer(authorizer, tracing),
      tracing,
      egress,
      featureGates: o.featureGates,
      healthChecks: [
        { name: 'etcd', check: async () => { await store.get('/healthz-probe') } },
        { name: 'poststarthook/start-registry', check: () => { if (!registryStarted) throw new Error('registry not started') } },
        started.healthCheck
      ],
      readyChecks: [{
        name: 'storage-space',
        // listed as [-]storage-space while full; fails readiness only when asked; logged once per transition by the store
        informational: o.storage?.readyzFailOnFull !== true,
        quiet: true,
        check: () => { const s = store.space(); if (s.full) throw new Error(s.message) }
      }]
    })
    await startRegistry
    await started.reconcile()
    await adm.start(registry)
    spaceEvents = startStorageSpaceEvents({ registry, store, logger, clock: { now: () => Date.now() }, host: hostname() })
    // Controllers start before the server listens, so the first clients find the namespaces' default accounts made.
    const startAll = (): Workloads => startWorkloads(served, logger, o, security.pki, authorizer)
    // On etcd other API servers may share the cluster: the workloads run in the one that holds the Lease (with no
    // component ports: those follow the leader in Kubernetes too, and each process would need its own).
    workloads = o.controllers === false ? undefined : o.etcd === undefined ? await serveWorkloads(startAll(), o, logger) : electedWorkloads(served, logger, startAll)
    const { port } = await server.listen({ port: o.port, host: o.bindAddress })
    const url = `https://${clientHost(o.bindAddress)}:${port}`
    if (prepared !== undefined) await writeLocalNodeCredentials(prepared, o.dataDir, url, security.pki)
    await writeClientKubeconfig(kubeconfigPath, url, security.pki, security.pki.admin)
    logger.info({ url, dataDir: o.dataDir, kubeconfig: kubeconfigPath }, 'orch is serving')
    // APIServerIdentity: a Lease per API server in kube-system (several may share one etcd).
    const identity = o.featureGates?.enabled('APIServerIdentity') === false ? undefined
      : new ApiServerIdentity({ client: inProcessClient(registry, 'kube-apiserver'), clock: systemControllerClock, logger, hostname: hostname(), url })
    identity?.start()
    // And the collector of identity Leases whose API servers stopped renewing them (hourly, as kube-apiserver's).
    const leaseGc = identity === undefined ? undefined
      : new ApiServerLeaseGc({ client: inProcessClient(registry, 'kube-apiserver'), clock: systemControllerClock, logger })
    leaseGc?.start()
    const node: RunningAgent | undefined = prepared === undefined ? undefined : await startLocalNode(prepared)
    const running = workloads
    let stopping: Promise<void> | undefined
    const srv = server
    const reg = registry
    const events = spaceEvents
    const audit = auditor
    return {
      server: srv,
      url,
      kubeconfigPath,
      stop: () => (stopping ??= (async () => {
        // Readiness fails first; load balancers get --shutdown-delay-duration to notice while requests are served.
        srv.beginShutdown()
        if ((o.shutdownDelayMs ?? 0) > 0) await new Promise(resolve => setTimeout(resolve, o.shutdownDelayMs))
        // The node agent goes next, while the API server can still take its last status writes.
        await node?.stop({ shutdown: true })
        running?.stop()
        leaseGc?.stop()
        await identity?.stop()
        await srv.close()
        await metricsSource.close()
        await audit?.close()
        await structured?.close()
        await events.stop()
        await adm.stop()
        started.stop()
        await reg.stop()
        await cel.dispose()
        await store.close()
        await tracing?.shutdown()
        egress.close()
        await rm(kubeconfigPath, { force: true })
      })())
    }
  } catch (err) {
    // A failed start leaves no kubeconfig behind.
    await rm(kubeconfigPath, { force: true }).catch(() => {})
    workloads?.stop()
    await server?.close().catch(() => {})
    await auditor?.close().catch(() => {})
    await structured?.close().catch(() => {})
    await spaceEvents?.stop()
    await admission?.stop().catch(() => {})
    authz?.stop()
    await registry?.stop().catch(() => {})
    await cel.dispose()
    await store.close().catch(() => {})
    await tracing?.shutdown().catch(() => {})
    egress.close()
    throw err
  }
}

/** Runs until SIGTERM/SIGINT, then shuts down cleanly; resolves with the exit code. */
export async function runUntilSignalled (o: UpOptions): Promise<number> {
  const cp = await startControlPlane(o)
  return await new Promise<number>(resolve => {
    const onSignal = (signal: NodeJS.Signals): void => {
      process.off('SIGTERM', onSignal)
      process.off('SIGINT', onSignal)
      o.logger.info({ signal }, 'shutting down')
      cp.stop().then(() => { o.logger.info('stopped'); resolve(0) }, err => { o.logger.error({ err }, 'shutdown failed'); resolve(1) })
    }
    process.on('SIGTERM', onSignal)
    process.on('SIGINT', onSignal)
  })
}
