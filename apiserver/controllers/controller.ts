// The shape every controller shares: informer handlers feed a rate-limited queue, workers reconcile one key at a time.

import type { ControllerClock } from './clock.js'
import type { InformerFactory } from './informer.js'
import type { ApiClient } from './client/types.js'
import type { EventRecorder } from './events.js'
import type { Logger } from '../registry/core.js'
import { WorkQueue } from './workqueue.js'
import type { CertificateAuthority } from '../pki/certs.js'
import type { Authorizer } from '../auth/types.js'
import type { PolicyTypeChecker } from '../admission/vap/type-check.js'
import type { WorkqueueMetricsProvider } from '../metrics/workqueue-metrics.js'

/** What a controller is given: the API, shared informers, time, events and a logger. */
export interface ControllerContext {
  client: ApiClient
  informers: InformerFactory
  clock: ControllerClock
  events: EventRecorder
  logger: Logger
  /** Settings from the configuration file (OrchControllerManagerConfiguration); unset ones take Kubernetes' defaults. */
  settings: ControllerSettings
  /** The controller manager's workqueue_* metrics, one queue per controller name; none without. */
  workqueueMetrics?: WorkqueueMetricsProvider
}

export interface ControllerSettings {
  /** NodeLifecycleController.NodeMonitorGracePeriod (40 s) and OrchCloudShared.NodeMonitorPeriod (5 s). */
  nodeMonitorGracePeriodMs?: number
  nodeMonitorPeriodMs?: number
  /** PodGCController.TerminatedPodGCThreshold (12500; 0 or less disables). */
  terminatedPodGCThreshold?: number
  /** The PEM CA bundle the root CA publisher puts in every namespace (SAController.RootCAFile); none: it does not run. */
  rootCABundle?: string
  /** ResourceQuotaController.ResourceQuotaSyncPeriod (5 minutes). */
  resourceQuotaSyncPeriodMs?: number
  /** EndpointSliceController.MaxEndpointsPerSlice (100). */
  maxEndpointsPerSlice?: number
  /**
   * CSRSigningController: the CA that signs approved requests of every built-in signer (ClusterSigningCertFile/KeyFile),
   * or one per signer name (the <Signer>SignerConfiguration files; a signer without a CA does not sign), and
   * ClusterSigningDuration (one year). None at all: csrsigning does not run.
   */
  csrSigning?: { ca?: CertificateAuthority, signers?: Partial<Record<string, CertificateAuthority>>, durationMs?: number }
  /**
   * Who may have an orchlet's client certificate approved automatically (csrapproving): asked for `create` on
   * certificatesigningrequests/nodeclient or /selfnodeclient in certificates.k8s.io, as a SubjectAccessReview.
   * Default: bootstrapApprovalPolicy (system:bootstrappers for nodeclient, system:nodes for selfnodeclient).
   */
  csrApprovalAuthorizer?: Authorizer
  /** HPAController: sync period, downscale stabilization window, tolerance, CPU initialization period, initial readiness delay. */
  hpa?: { syncPeriodMs?: number; downscaleStabilizationMs?: number; tolerance?: number; cpuInitializationPeriodMs?: number; initialReadinessDelayMs?: number }
  /** Type checks ValidatingAdmissionPolicies for their status (createPolicyTypeChecker); none: the status controller does not run. */
  policyTypeChecker?: PolicyTypeChecker
}

/** What `reconcile` may ask for: to look again after a while (a deadline, a back-off, a schedule). */
export interface ReconcileResult { requeueAfterMs?: number }

export interface Controller {
  readonly name: string
  /** Registers informer handlers; called before the informers start. */
  start(workers: number): void
  stop(): void
  /** Test hook: reconciles one key now. */
  reconcile(key: string): Promise<ReconcileResult | void>
}

/**
 * Runs `reconcile` for queued keys on `workers` concurrent loops. A thrown error re-queues the key with
 * back-off (a 409 Conflict is expected under contention and is logged at debug level only).
 */
export abstract class QueueController implements Controller {
  readonly queue: WorkQueue
  private running = false

  constructor (readonly name: string, protected readonly c: ControllerContext) {
    this.queue = new WorkQueue({ clock: c.clock, metrics: c.workqueueMetrics?.forQueue(name, () => c.clock.now()) })
  }

  abstract reconcile (key: string): Promise<ReconcileResult | void>

  /** Subclasses register informer handlers here. */
  protected abstract watch (): void

  start (workers: number): void {
    this.watch()
    this.running = true
    for (let i = 0; i < Math.max(1, workers); i++) void this.loop()
  }

  stop (): void {
    this.running = false
    this.queue.shutDown()
  }

  private async loop (): Promise<void> {
    while (this.running) {
      const key = await this.queue.get()
      if (key === undefined) return
      try {
        const r = await this.reconcile(key)
        this.queue.forget(key)
        if (r !== undefined && r.requeueAfterMs !== undefined) this.queue.addAfter(key, r.requeueAfterMs)
      } catch (err) {
        const code = (err as { code?: number }).code
        if (code === 409) this.c.logger.debug({ controller: this.name, key, err }, 'conflict; retrying')
        else this.c.logger.warn({ controller: this.name, key, err }, 'reconcile failed; retrying')
        this.queue.addRateLimited(key)
      } finally {
        this.queue.done(key)
      }
    }
  }
}
