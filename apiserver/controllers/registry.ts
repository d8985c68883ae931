// Every controller the manager can run, by the name `--controllers` uses (kube-controller-manager's names).

import type { Controller, ControllerContext } from './controller.js'
import { DeploymentController } from './workloads/deployment.js'
import { REPLICATION_CONTROLLER, ReplicaSetController } from './workloads/replicaset.js'
import { JobController } from './workloads/job.js'
import { CronJobController } from './workloads/cronjob.js'
import { EndpointsController } from './network/endpoints.js'
import { EndpointSliceController } from './network/endpointslices.js'
import { ServiceAccountController } from './cluster/serviceaccounts.js'
import { NodeLifecycleController } from './cluster/node-lifecycle.js'
import { DisruptionController } from './cluster/disruption.js'
import { PodGCController } from './cluster/podgc.js'
import { TTLAfterFinishedController } from './workloads/ttl-after-finished.js'
import { DaemonSetController } from './workloads/daemonset.js'
import { ResourceQuotaController } from './cluster/resource-quota.js'
import { RootCAPublisher } from './cluster/root-ca-publisher.js'
import { StatefulSetController } from './workloads/statefulset.js'
import { CsrSigningController } from './certificates/csr-signing.js'
import { CsrApprovingController } from './certificates/csr-approving.js'
import { TokenCleaner } from './cluster/token-cleaner.js'
import { CsrCleaner } from './certificates/csr-cleaner.js'
import { ValidatingAdmissionPolicyStatusController } from './admission/vap-status.js'
import { HorizontalPodAutoscalerController } from './autoscaling/hpa.js'

export const CONTROLLERS = {
  deployment: (c: ControllerContext): Controller => new DeploymentController(c),
  replicaset: (c: ControllerContext): Controller => new ReplicaSetController(c),
  replicationcontroller: (c: ControllerContext): Controller => new ReplicaSetController(c, REPLICATION_CONTROLLER),
  job: (c: ControllerContext): Controller => new JobController(c),
  cronjob: (c: ControllerContext): Controller => new CronJobController(c),
  endpoint: (c: ControllerContext): Controller => new EndpointsController(c),
  endpointslice: (c: ControllerContext): Controller => new EndpointSliceController(c),
  serviceaccount: (c: ControllerContext): Controller => new ServiceAccountController(c),
  nodelifecycle: (c: ControllerContext): Controller => new NodeLifecycleController(c),
  disruption: (c: ControllerContext): Controller => new DisruptionController(c),
  podgc: (c: ControllerContext): Controller => new PodGCController(c),
  ttlafterfinished: (c: ControllerContext): Controller => new TTLAfterFinishedController(c),
  daemonset: (c: ControllerContext): Controller => new DaemonSetController(c),
  statefulset: (c: ControllerContext): Controller => new StatefulSetController(c),
  resourcequota: (c: ControllerContext): Controller => new ResourceQuotaController(c),
  horizontalpodautoscaling: (c: ControllerContext): Controller => new HorizontalPodAutoscalerController(c, c.settings.hpa),
  'root-ca-cert-publisher': (c: ControllerContext): Controller | undefined =>
    c.settings.rootCABundle === undefined ? undefined : new RootCAPublisher(c, c.settings.rootCABundle),
  csrsigning: (c: ControllerContext): Controller | undefined => {
    const s = c.settings.csrSigning
    if (s === undefined || (s.ca === undefined && Object.keys(s.signers ?? {}).length === 0)) return undefined
    return new CsrSigningController(c, s)
  },
  csrapproving: (c: ControllerContext): Controller => new CsrApprovingController(c, c.settings.csrApprovalAuthorizer),
  csrcleaner: (c: ControllerContext): Controller => new CsrCleaner(c),
  tokencleaner: (c: ControllerContext): Controller => new TokenCleaner(c),
  'validatingadmissionpolicy-status-controller': (c: ControllerContext): Controller | undefined =>
    c.settings.policyTypeChecker === undefined ? undefined : new ValidatingAdmissionPolicyStatusController(c, c.settings.policyTypeChecker)
} as const satisfies Record<string, (c: ControllerContext) => Controller | undefined>

export type ControllerName = keyof typeof CONTROLLERS
