// The fields of the controller manager configuration kinds (spec document 2, §2.2), as data: name -> type.

export type FieldType =
  | 'int32' | 'float' | 'bool' | 'string' | 'duration' | 'strings'
  | { object: Fields }
  | { list: Fields }

export interface Fields { [name: string]: FieldType }

const int32 = 'int32' as const
const duration = 'duration' as const

/** client-go's ClientConnectionConfiguration (component-base, camelCase). */
const clientConnection: Fields = { kubeconfig: 'string', acceptContentTypes: 'string', contentType: 'string', qps: 'float', burst: int32 }
/** component-base's LeaderElectionConfiguration. */
const leaderElection: Fields = {
  leaderElect: 'bool', leaseDuration: duration, renewDeadline: duration, retryPeriod: duration,
  resourceLock: 'string', resourceName: 'string', resourceNamespace: 'string'
}
const debugging: Fields = { enableProfiling: 'bool', enableContentionProfiling: 'bool' }

export const leaderMigration: Fields = {
  kind: 'string', apiVersion: 'string',
  leaderName: 'string', resourceLock: 'string', controllerLeaders: { list: { name: 'string', component: 'string' } }
}

export const generic: Fields = {
  Port: int32, Address: 'string', MinResyncPeriod: duration, ClientConnection: { object: clientConnection },
  ControllerStartInterval: duration, LeaderElection: { object: leaderElection }, Controllers: 'strings',
  Debugging: { object: debugging }, LeaderMigrationEnabled: 'bool', LeaderMigration: { object: leaderMigration }
}

const cloudShared: Fields = {
  CloudProvider: { object: { Name: 'string', CloudConfigFile: 'string' } }, ExternalCloudVolumePlugin: 'string',
  UseServiceAccountCredentials: 'bool', AllowUntaggedCloud: 'bool', RouteReconciliationPeriod: duration, NodeMonitorPeriod: duration,
  ClusterName: 'string', ClusterCIDR: 'string', AllocateNodeCIDRs: 'bool', CIDRAllocatorType: 'string', ConfigureCloudRoutes: 'bool',
  NodeSyncPeriod: duration
}

const signer: Fields = { CertFile: 'string', KeyFile: 'string' }
const recycler: Fields = {
  MaximumRetry: int32, MinimumTimeoutNFS: int32, PodTemplateFilePathNFS: 'string', IncrementTimeoutNFS: int32,
  PodTemplateFilePathHostPath: 'string', MinimumTimeoutHostPath: int32, IncrementTimeoutHostPath: int32
}

/** One member per controller, each of type `<Name>Configuration`. */
export const controllerSections: Record<string, Fields> = {
  AttachDetachController: { DisableAttachDetachReconcilerSync: 'bool', ReconcilerSyncLoopPeriod: duration },
  CSRSigningController: {
    ClusterSigningCertFile: 'string', ClusterSigningKeyFile: 'string',
    OrchletServingSignerConfiguration: { object: signer }, OrchletClientSignerConfiguration: { object: signer },
    OrchAPIServerClientSignerConfiguration: { object: signer }, LegacyUnknownSignerConfiguration: { object: signer },
    ClusterSigningDuration: duration
  },
  DaemonSetController: { ConcurrentDaemonSetSyncs: int32 },
  DeploymentController: { ConcurrentDeploymentSyncs: int32 },
  StatefulSetController: { ConcurrentStatefulSetSyncs: int32 },
  DeprecatedController: {},
  EndpointController: { ConcurrentEndpointSyncs: int32, EndpointUpdatesBatchPeriod: duration },
  EndpointSliceController: { ConcurrentServiceEndpointSyncs: int32, MaxEndpointsPerSlice: int32, EndpointUpdatesBatchPeriod: duration },
  EndpointSliceMirroringController: { MirroringConcurrentServiceEndpointSyncs: int32, MirroringMaxEndpointsPerSubset: int32, MirroringEndpointUpdatesBatchPeriod: duration },
  EphemeralVolumeController: { ConcurrentEphemeralVolumeSyncs: int32 },
  GarbageCollectorController: { EnableGarbageCollector: 'bool', ConcurrentGCSyncs: int32, GCIgnoredResources: { list: { Group: 'string', Resource: 'string' } } },
  HPAController: {
    ConcurrentHorizontalPodAutoscalerSyncs: int32, HorizontalPodAutoscalerSyncPeriod: duration, HorizontalPodAutoscalerUpscaleForbiddenWindow: duration,
    HorizontalPodAutoscalerDownscaleStabilizationWindow: duration, HorizontalPodAutoscalerDownscaleForbiddenWindow: duration,
    HorizontalPodAutoscalerTolerance: 'float', HorizontalPodAutoscalerCPUInitializationPeriod: duration, HorizontalPodAutoscalerInitialReadinessDelay: duration
  },
  JobController: { ConcurrentJobSyncs: int32 },
  CronJobController: { ConcurrentCronJobSyncs: int32 },
  LegacySATokenCleaner: { CleanUpPeriod: duration },
  NamespaceController: { NamespaceSyncPeriod: duration, ConcurrentNamespaceSyncs: int32 },
  NodeIPAMController: { ServiceCIDR: 'string', SecondaryServiceCIDR: 'string', NodeCIDRMaskSize: int32, NodeCIDRMaskSizeIPv4: int32, NodeCIDRMaskSizeIPv6: int32 },
  NodeLifecycleController: {
    NodeEvictionRate: 'float', SecondaryNodeEvictionRate: 'float', NodeStartupGracePeriod: duration, NodeMonitorGracePeriod: duration,
    PodEvictionTimeout: duration, LargeClusterSizeThreshold: int32, UnhealthyZoneThreshold: 'float'
  },
  PersistentVolumeBinderController: {
    PVClaimBinderSyncPeriod: duration,
    VolumeConfiguration: { object: { EnableHostPathProvisioning: 'bool', EnableDynamicProvisioning: 'bool', PersistentVolumeRecyclerConfiguration: { object: recycler }, FlexVolumePluginDir: 'string' } },
    VolumeHostCIDRDenylist: 'strings', VolumeHostAllowLocalLoopback: 'bool'
  },
  PodGCController: { TerminatedPodGCThreshold: int32 },
  ReplicaSetController: { ConcurrentRSSyncs: int32 },
  ReplicationController: { ConcurrentRCSyncs: int32 },
  ResourceQuotaController: { ResourceQuotaSyncPeriod: duration, ConcurrentResourceQuotaSyncs: int32 },
  SAController: { ServiceAccountKeyFile: 'string', ConcurrentSATokenSyncs: int32, RootCAFile: 'string' },
  ServiceController: { ConcurrentServiceSyncs: int32 },
  TTLAfterFinishedController: { ConcurrentTTLSyncs: int32 },
  ValidatingAdmissionPolicyStatusController: { ConcurrentPolicySyncs: int32 }
}

export const orchControllerManager: Fields = {
  kind: 'string', apiVersion: 'string',
  Generic: { object: generic }, OrchCloudShared: { object: cloudShared },
  ...Object.fromEntries(Object.entries(controllerSections).map(([k, v]) => [k, { object: v }]))
}

export const cloudControllerManager: Fields = {
  kind: 'string', apiVersion: 'string',
  Generic: { object: generic }, OrchCloudShared: { object: cloudShared },
  NodeController: { object: { ConcurrentNodeSyncs: int32 } }, ServiceController: { object: { ConcurrentServiceSyncs: int32 } },
  NodeStatusUpdateFrequency: duration, Webhook: { object: { Webhooks: 'strings' } }
}
