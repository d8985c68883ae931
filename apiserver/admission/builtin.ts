// The admission plugins orch builds itself, by their Kubernetes names (the others plug in through buildAdmission).

import type { AdmissionPluginFactory } from './plugins.js'
import { limitRangerPlugin } from './limitranger/limit-ranger.js'
import { resourceQuotaPlugin } from './quota/resource-quota.js'
import { alwaysPullImagesPlugin } from './pods/always-pull-images.js'
import { runtimeClassPlugin } from './pods/runtime-class.js'
import { taintNodesByConditionPlugin } from './nodes/taint-nodes-by-condition.js'
import { storageObjectInUseProtectionPlugin } from './storage/storage-object-in-use-protection.js'
import { defaultStorageClassPlugin } from './storage/default-storage-class.js'
import { persistentVolumeClaimResizePlugin } from './storage/persistent-volume-claim-resize.js'
import { defaultIngressClassPlugin } from './network/default-ingress-class.js'
import { createPodSecurityPlugin, registryPodSecurityDeps } from './podsecurity/index.js'

export function builtinPluginFactories (): Record<string, AdmissionPluginFactory> {
  return {
    LimitRanger: deps => limitRangerPlugin(deps),
    ResourceQuota: deps => resourceQuotaPlugin(deps),
    AlwaysPullImages: () => alwaysPullImagesPlugin(),
    RuntimeClass: deps => runtimeClassPlugin(deps),
    TaintNodesByCondition: () => taintNodesByConditionPlugin(),
    StorageObjectInUseProtection: () => storageObjectInUseProtectionPlugin(),
    DefaultStorageClass: deps => defaultStorageClassPlugin(deps),
    PersistentVolumeClaimResize: deps => persistentVolumeClaimResizePlugin(deps),
    DefaultIngressClass: deps => defaultIngressClassPlugin(deps),
    PodSecurity: (deps, config) => createPodSecurityPlugin(registryPodSecurityDeps(deps.registry), config)
  }
}
