// `orch controller-manager` and `orch scheduler` as processes of their own: configuration checked first, then the
// API reached over HTTP, leader election on a Lease, and a clean stop on SIGTERM.

import { hostname } from 'node:os'
import { readFileSync } from 'node:fs'
import { randomUUID } from 'node:crypto'
import type { Logger } from 'pino'
import { loadKubeconfig } from '../client/kubeconfig.js'
import { httpClient } from '../controllers/client/http.js'
import { systemControllerClock } from '../controllers/clock.js'
import { LeaderElector } from '../controllers/leader-election.js'
import { startControllerManager } from '../controllers/manager.js'
import type { ControllerSettings } from '../controllers/controller.js'
import { startScheduler } from '../scheduler/run.js'
import { UsageError, type Flags } from './args.js'
import { loadCsrSigningSettings } from './csr-signing-flags.js'
import { concurrencyOf, loadControllerManagerConfig, type LoadedConfig } from './cm-config/load.js'
import { serveComponent } from './component-server.js'
import { ComponentMetrics } from '../metrics/component-metrics.js'
import { SchedulerMetrics } from '../metrics/scheduler-metrics.js'
import { SERVED_MINOR } from '../endpoints/version.js'

export interface ComponentOptions {
  component: 'controller-manager' | 'scheduler'
  kubeconfig?: string
  configFile?: string
  leaderMigrationConfig?: string
  controllers?: string[]
  leaderElect?: boolean
  /** --root-ca-file: the CA bundle published as kube-root-ca.crt in every namespace. */
  rootCAFile?: string
  /** Health endpoint (`/healthz`, `/healthz/leaderElection`): port 0 is off; Generic.Port/Address of --config otherwise. */
  port?: number
  /** --show-hidden-metrics-for-version of the component's /metrics (served on the health port). */
  showHiddenMetricsForVersion?: string
  bindAddress?: string
  /** The parsed flags, for the --cluster-signing-* ones (CSR_SIGNING_FLAGS). */
  flags?: Flags
  logger: Logger
}

interface Plan {
  kubeconfig: string
  leaderElect: boolean
  leaseDurationMs?: number
  renewDeadlineMs?: number
  retryPeriodMs?: number
  lease: { namespace: string, name: string }
  qps?: number
  burst?: number
  controllers: string[]
  concurrency: Record<string, number>
  settings: ControllerSettings
  health: { port: number, address: string }
  /** The CSRSigningController section of --config (its files are read at start, with the flags). */
  csrSigningSection: Record<string, unknown>
}

/** Everything read and validated before anything connects (configuration errors exit 1 with one line each). */
export function planComponent (o: ComponentOptions): Plan {
  const config = o.configFile === undefined ? {} : loadControllerManagerConfig(o.configFile, ['OrchControllerManagerConfiguration']).config
  if (o.leaderMigrationConfig !== undefined) loadControllerManagerConfig(o.leaderMigrationConfig, ['LeaderMigrationConfiguration'])
  const g = config.Generic ?? {}
  const le = g.LeaderElection ?? {}
  const kubeconfig = o.kubeconfig ?? g.ClientConnection?.kubeconfig
  if (kubeconfig === undefined || kubeconfig === '') throw new UsageError('--kubeconfig is required (or Generic.ClientConnection.kubeconfig in --config)')
  return {
    kubeconfig,
    leaderElect: o.leaderElect ?? le.leaderElect ?? true,
    leaseDurationMs: le.leaseDuration,
    renewDeadlineMs: le.renewDeadline,
    retryPeriodMs: le.retryPeriod,
    lease: { namespace: le.resourceNamespace ?? 'orch-system', name: le.resourceName ?? `orch-${o.component}` },
    qps: g.ClientConnection?.qps,
    burst: g.ClientConnection?.burst,
    controllers: o.controllers ?? g.Controllers ?? ['*'],
    concurrency: concurrencyOf(config),
    health: { port: o.port ?? g.Port ?? 0, address: o.bindAddress ?? g.Address ?? '127.0.0.1' },
    csrSigningSection: (config.CSRSigningController ?? {}) as Record<string, unknown>,
    settings: { ...controllerSettingsOf(config), rootCABundle: readCABundle(o.rootCAFile ?? config.SAController?.RootCAFile) }
  }
}

/** What an OrchControllerManagerConfiguration sets for the controllers (orch controller-manager and orch up). */
export function controllerSettingsOf (config: LoadedConfig['config']): ControllerSettings {
  return {
    nodeMonitorGracePeriodMs: config.NodeLifecycleController?.NodeMonitorGracePeriod,
    nodeMonitorPeriodMs: config.OrchCloudShared?.NodeMonitorPeriod,
    terminatedPodGCThreshold: config.PodGCController?.TerminatedPodGCThreshold,
    maxEndpointsPerSlice: config.EndpointSliceController?.MaxEndpointsPerSlice,
    resourceQuotaSyncPeriodMs: config.ResourceQuotaController?.ResourceQuotaSyncPeriod,
    hpa: {
      syncPeriodMs: config.HPAController?.HorizontalPodAutoscalerSyncPeriod,
      downscaleStabilizationMs: config.HPAController?.HorizontalPodAutoscalerDownscaleStabilizationWindow,
      tolerance: config.HPAController?.HorizontalPodAutoscalerTolerance,
      cpuInitializationPeriodMs: config.HPAController?.HorizontalPodAutoscalerCPUInitializationPeriod,
      initialReadinessDelayMs: config.HPAController?.HorizontalPodAutoscalerInitialReadinessDelay
    }
  }
}

/** Runs until SIGTERM/SIGINT (exit 0) or lost leadership (exit 1, as Kubernetes' components do). */
export async function runComponent (o: ComponentOptions): Promise<number> {
  const plan = planComponent(o)
  const metrics = new ComponentMetrics({ version: `1.${SERVED_MINOR}`, showHiddenMetricsForVersion: o.showHiddenMetricsForVersion })
  plan.settings.csrSigning = await loadCsrSigningSettings(o.flags ?? {}, plan.csrSigningSection)
  const logger = o.logger
  const connection = loadKubeconfig(plan.kubeconfig)
  const userAgent = `orch-${o.component}`
  const client = httpClient({ connection, userAgent, qps: plan.qps, burst: plan.burst })
  let running: { stop(): void } | undefined
  const run = (): void => {
    running = o.component === 'scheduler'
      ? startScheduler({ client, logger, metrics: new SchedulerMetrics(metrics) })
      : startControllerManager({ client, logger, controllers: plan.controllers, concurrency: plan.concurrency, settings: plan.settings, metrics })
    logger.info({ component: o.component }, 'started')
  }
  let elector: LeaderElector | undefined
  const health = plan.health.port > 0 ? await serveComponent({ ...plan.health, leaderHealthy: () => elector?.healthy() ?? true, metrics }) : undefined
  if (health !== undefined) logger.info({ port: plan.health.port, address: plan.health.address }, 'serving health checks')
  return await new Promise<number>(resolve => {
    // Controller timers are unref'd and idle sockets too: a candidate waiting for the lease must not just exit.
    const keepAlive = setInterval(() => {}, 1 << 30)
    const finish = (code: number): void => {
      clearInterval(keepAlive)
      process.off('SIGTERM', onSignal)
      process.off('SIGINT', onSignal)
      running?.stop()
      health?.close()
      void (elector?.stop() ?? Promise.resolve()).finally(() => { void client.close().finally(() => resolve(code)) })
    }
    const onSignal = (): void => { logger.info('shutting down'); finish(0) }
    process.on('SIGTERM', onSignal)
    process.on('SIGINT', onSignal)
    if (!plan.leaderElect) { run(); return }
    elector = new LeaderElector({
      client, clock: systemControllerClock, logger,
      identity: `${hostname()}_${randomUUID()}`, ...plan.lease,
      leaseDurationMs: plan.leaseDurationMs, renewDeadlineMs: plan.renewDeadlineMs, retryPeriodMs: plan.retryPeriodMs,
      onStartedLeading: run,
      onStoppedLeading: () => { logger.error('leader election lost'); finish(1) }
    })
    elector.start()
  })
}

/** The PEM bundle of --root-ca-file / SAController.RootCAFile, read before anything connects. */
function readCABundle (file: string | undefined): string | undefined {
  if (file === undefined || file === '') return undefined
  let text: string
  try { text = readFileSync(file, 'utf8') } catch (err) { throw new UsageError(`--root-ca-file ${file}: ${(err as Error).message}`) }
  if (!text.includes('-----BEGIN CERTIFICATE-----')) throw new UsageError(`--root-ca-file ${file}: holds no PEM certificate`)
  return text
}
