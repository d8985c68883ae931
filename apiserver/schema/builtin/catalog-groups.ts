// Catalog entries of the v1.29 groups beyond the workloads' (networking, storage, autoscaling, events, flowcontrol,
// apiregistration, and the alpha groups served only when --runtime-config enables them). Stored and validated from
// their schemas; behaviour-bearing kinds get their behaviour elsewhere.
import { age, col, computed, type KindEntry } from './kind-entry.js'

const api = (group: string, version: string, kind: string): string => `io.orch.api.${group}.${version}.${kind}`
const condition = (type: string): string => `.status.conditions[?(@.type=="${type}")].status`

function networking (): KindEntry[] {
  const group = 'networking.orch.io'
  return [
    { group, version: 'v1', kind: 'Ingress', plural: 'ingresses', schema: api('networking', 'v1', 'Ingress'), namespaced: true,
      shortNames: ['ing'], status: true, generation: true,
      printerColumns: [computed('Class', 'ingressClass'), computed('Hosts', 'ingressHosts'), computed('Address', 'ingressAddress'),
        computed('Ports', 'ingressPorts'), age] },
    { group, version: 'v1', kind: 'IngressClass', plural: 'ingressclasses', schema: api('networking', 'v1', 'IngressClass'),
      namespaced: false, generation: true, printerColumns: [col('Controller', '.spec.controller'), col('Parameters', '.spec.parameters.name'), age] },
    { group, version: 'v1', kind: 'NetworkPolicy', plural: 'networkpolicies', schema: api('networking', 'v1', 'NetworkPolicy'),
      namespaced: true, shortNames: ['netpol'], generation: true, printerColumns: [computed('Pod-Selector', 'networkPolicySelector'), age] },
    { group, version: 'v1alpha1', kind: 'IPAddress', plural: 'ipaddresses', schema: api('networking', 'v1alpha1', 'IPAddress'),
      namespaced: false, shortNames: ['ip'], offByDefault: true },
    { group, version: 'v1alpha1', kind: 'ServiceCIDR', plural: 'servicecidrs', schema: api('networking', 'v1alpha1', 'ServiceCIDR'),
      namespaced: false, status: true, offByDefault: true },
  ]
}

function storage (): KindEntry[] {
  const group = 'storage.orch.io'
  const v1 = (kind: string, plural: string, rest: Partial<KindEntry>): KindEntry =>
    ({ group, version: 'v1', kind, plural, schema: api('storage', 'v1', kind), namespaced: false, ...rest })
  return [
    v1('StorageClass', 'storageclasses', { shortNames: ['sc'], printerColumns: [col('Provisioner', '.provisioner'),
      col('ReclaimPolicy', '.reclaimPolicy'), col('VolumeBindingMode', '.volumeBindingMode'),
      col('AllowVolumeExpansion', '.allowVolumeExpansion', 'boolean'), age] }),
    v1('CSIDriver', 'csidrivers', { printerColumns: [col('AttachRequired', '.spec.attachRequired', 'boolean'),
      col('PodInfoOnMount', '.spec.podInfoOnMount', 'boolean'), col('StorageCapacity', '.spec.storageCapacity', 'boolean'),
      col('Modes', '.spec.volumeLifecycleModes'), age] }),
    v1('CSINode', 'csinodes', { printerColumns: [col('Drivers', '.spec.drivers[*].name'), age] }),
    v1('CSIStorageCapacity', 'csistoragecapacities', { namespaced: true,
      printerColumns: [col('StorageClassName', '.storageClassName'), col('Capacity', '.capacity'), age] }),
    v1('VolumeAttachment', 'volumeattachments', { status: true, printerColumns: [col('Attacher', '.spec.attacher'),
      col('PV', '.spec.source.persistentVolumeName'), col('Node', '.spec.nodeName'), col('Attached', '.status.attached', 'boolean'), age] }),
    { group, version: 'v1alpha1', kind: 'VolumeAttributesClass', plural: 'volumeattributesclasses', namespaced: false,
      schema: api('storage', 'v1alpha1', 'VolumeAttributesClass'), shortNames: ['vac'], offByDefault: true,
      printerColumns: [col('DriverName', '.driverName'), age] },
  ]
}

/** HorizontalPodAutoscaler: stored as autoscaling/v2, served as v1 too (v1 keeps what it cannot say in an annotation). */
function autoscaling (): KindEntry[] {
  // Targets reads v2's spec.metrics, or v1's targetCPUUtilizationPercentage, so both versions print alike.
  const columns = [computed('Reference', 'hpaReference'), computed('Targets', 'hpaTargets'), computed('MinPods', 'hpaMinPods'),
    col('MaxPods', '.spec.maxReplicas', 'integer'), col('Replicas', '.status.currentReplicas', 'integer'), age]
  return ['v2', 'v1'].map((version): KindEntry => ({
    group: 'autoscaling', version, kind: 'HorizontalPodAutoscaler', plural: 'horizontalpodautoscalers',
    schema: api('autoscaling', version, 'HorizontalPodAutoscaler'), namespaced: true, shortNames: ['hpa'], categories: ['all'],
    status: true, generation: true, printerColumns: columns,
    ...(version === 'v1' ? { storedAs: { group: 'autoscaling', version: 'v2' }, conversion: 'hpa' as const } : {}),
  }))
}

/** events.k8s.io/v1 Event: the same objects as core v1 Events, converted field by field. */
function events (): KindEntry {
  return { group: 'events.orch.io', version: 'v1', kind: 'Event', plural: 'events', schema: api('events', 'v1', 'Event'),
    namespaced: true, shortNames: ['ev'], allowCreateOnUpdate: true, strategy: 'events-v1', storedAs: { group: '', version: 'v1' }, conversion: 'event',
    printerColumns: [col('Type', '.type'), col('Reason', '.reason'), col('Object', '.regarding.name'), col('Note', '.note'), age] }
}

/** API Priority and Fairness: v1 stored; v1beta3 served, deprecated, converted with the zero-shares rule (spec §9.4). */
function flowcontrol (): KindEntry[] {
  const group = 'flowcontrol.apiserver.orch.io'
  const out: KindEntry[] = []
  for (const version of ['v1', 'v1beta3']) {
    const beta = version === 'v1beta3'
      ? { storedAs: { group, version: 'v1' }, conversion: 'flowcontrol' as const,
          deprecated: { deprecatedIn: 'v1.29', removedIn: 'v1.32', replacement: `${group}/v1` } }
      : {}
    out.push({ group, version, kind: 'FlowSchema', plural: 'flowschemas', schema: api('flowcontrol', version, 'FlowSchema'),
      namespaced: false, status: true, generation: true, ...beta,
      printerColumns: [col('PriorityLevel', '.spec.priorityLevelConfiguration.name'),
        col('MatchingPrecedence', '.spec.matchingPrecedence', 'integer'), col('DistinguisherMethod', '.spec.distinguisherMethod.type'), age,
        col('MissingPL', condition('Dangling'))] })
    out.push({ group, version, kind: 'PriorityLevelConfiguration', plural: 'prioritylevelconfigurations',
      schema: api('flowcontrol', version, 'PriorityLevelConfiguration'), namespaced: false, status: true, generation: true, ...beta,
      printerColumns: [col('Type', '.spec.type'), col('NominalConcurrencyShares', '.spec.limited.nominalConcurrencyShares'),
        col('Queues', '.spec.limited.limitResponse.queuing.queues'), col('HandSize', '.spec.limited.limitResponse.queuing.handSize'),
        col('QueueLengthLimit', '.spec.limited.limitResponse.queuing.queueLengthLimit'), age] })
  }
  return out
}

function apiregistration (): KindEntry {
  return { group: 'apiregistration.orch.io', version: 'v1', kind: 'APIService', plural: 'apiservices', namespaced: false,
    schema: 'io.orch.kube-aggregator.pkg.apis.apiregistration.v1.APIService', categories: ['api-extensions'], status: true,
    printerColumns: [col('Service', '.spec.service.name'), col('Available', condition('Available')), age] }
}

/** Alpha kinds of v1.29 (off by default; `--runtime-config resource.k8s.io/v1alpha2=true` and the like serve them). */
function alpha (): KindEntry[] {
  const resource = (kind: string, plural: string, namespaced: boolean, status: boolean): KindEntry =>
    ({ group: 'resource.orch.io', version: 'v1alpha2', kind, plural, schema: api('resource', 'v1alpha2', kind), namespaced, status, offByDefault: true })
  return [
    resource('ResourceClaim', 'resourceclaims', true, true),
    resource('ResourceClaimTemplate', 'resourceclaimtemplates', true, false),
    resource('ResourceClass', 'resourceclasses', false, false),
    resource('PodSchedulingContext', 'podschedulingcontexts', true, true),
    { group: 'certificates.orch.io', version: 'v1alpha1', kind: 'ClusterTrustBundle', plural: 'clustertrustbundles',
      schema: api('certificates', 'v1alpha1', 'ClusterTrustBundle'), namespaced: false, offByDefault: true },
    { group: 'internal.apiserver.orch.io', version: 'v1alpha1', kind: 'StorageVersion', plural: 'storageversions',
      schema: api('apiserverinternal', 'v1alpha1', 'StorageVersion'), namespaced: false, status: true, offByDefault: true },
  ]
}

/** The entries of this file, in catalog order. */
export function moreEntries (): KindEntry[] {
  return [...networking(), ...storage(), ...autoscaling(), events(), ...flowcontrol(), apiregistration(), ...alpha()]
}
