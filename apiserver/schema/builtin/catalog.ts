// The served built-in kinds: one data entry per kind, built into ResourceDefinitions from the derived schemas.
//
// Adding a kind is adding an entry to `entries` (its definition must exist in definitions.json; re-run
// derive/derive-builtin.ts if it does not). Printer columns use a JSONPath where it answers as Kubernetes'
// printer does; computed ones (Pod READY/RESTARTS, Node STATUS, Deployment READY, ...) name a printer in
// apiserver/endpoints/printers.ts. Scale paths of built-ins: `labelSelectorPath` names the LabelSelector object (`.spec.selector`),
// which the scale subresource renders as a selector string, unlike a CRD's path to a string field.
import derived from './definitions.json' with { type: 'json' }
import { builtinOverlay, requiredOnCreateOnly, type SchemaOverlay } from './defaults.js'
import { referencedDefinitions } from '../resolve.js'
import type { PrinterColumn, ResourceDefinition, SchemaDefinitions, StructuralSchema } from '../types.js'
import { age, allVerbs, col, computed, nameWide, replicasScale, template, type KindEntry } from './kind-entry.js'
import { moreEntries } from './catalog-groups.js'
import { emptyRuntimeConfig, isServed, type RuntimeConfig } from './runtime-config.js'

/** Role, ClusterRole, RoleBinding, ClusterRoleBinding: names are path segments; kubectl's RBAC printer columns. */
function rbacEntries (): KindEntry[] {
  const group = 'rbac.authorization.orch.io'
  const schema = (k: string): string => 'io.orch.api.rbac.v1.' + k
  // Roles print as the default table does (Name, Created At), as kube-apiserver's printRole.
  const roleColumns: PrinterColumn[] = []
  const bindingColumns = [computed('Role', 'bindingRole'), age, computed('Users', 'bindingUsers', 'string', 1),
    computed('Groups', 'bindingGroups', 'string', 1), computed('ServiceAccounts', 'bindingServiceAccounts', 'string', 1)]
  const entry = (kind: string, plural: string, namespaced: boolean, strategy: string, printerColumns: PrinterColumn[]): KindEntry =>
    ({ group, version: 'v1', kind, plural, schema: schema(kind), namespaced, strategy, nameValidation: 'path', printerColumns })
  return [
    entry('Role', 'roles', true, 'role', roleColumns),
    entry('ClusterRole', 'clusterroles', false, 'clusterrole', roleColumns),
    entry('RoleBinding', 'rolebindings', true, 'rolebinding', bindingColumns),
    entry('ClusterRoleBinding', 'clusterrolebindings', false, 'clusterrolebinding', bindingColumns)
  ]
}

// Columns, order, priorities and cells follow kube-apiserver 1.29's printers (pkg/printers/internalversion).
const core = 'io.orch.api.core.v1.'
const entries: KindEntry[] = [
  { group: '', version: 'v1', kind: 'Namespace', plural: 'namespaces', schema: core + 'Namespace', namespaced: false,
    shortNames: ['ns'], status: true, strategy: 'namespace', nameValidation: 'label',
    printerColumns: [col('Status', '.status.phase'), age] },
  { group: '', version: 'v1', kind: 'Pod', plural: 'pods', schema: core + 'Pod', namespaced: true,
    shortNames: ['po'], categories: ['all'], status: true, strategy: 'pod',
    printerColumns: [computed('Ready', 'podReady'), computed('Status', 'podStatus'), computed('Restarts', 'podRestarts'), age,
      computed('IP', 'podIP', 'string', 1), computed('Node', 'podNode', 'string', 1),
      computed('Nominated Node', 'podNominatedNode', 'string', 1), computed('Readiness Gates', 'podReadinessGates', 'string', 1)] },
  { group: '', version: 'v1', kind: 'Service', plural: 'services', schema: core + 'Service', namespaced: true,
    shortNames: ['svc'], categories: ['all'], status: true, strategy: 'service', nameValidation: 'dns1035',
    printerColumns: [col('Type', '.spec.type'), computed('Cluster-IP', 'serviceClusterIP'),
      computed('External-IP', 'serviceExternalIP'), computed('Port(s)', 'servicePorts'), age,
      computed('Selector', 'serviceSelector', 'string', 1)] },
  { group: '', version: 'v1', kind: 'ConfigMap', plural: 'configmaps', schema: core + 'ConfigMap', namespaced: true,
    shortNames: ['cm'], printerColumns: [computed('Data', 'dataCount'), age] },
  { group: '', version: 'v1', kind: 'Secret', plural: 'secrets', schema: core + 'Secret', namespaced: true,
    strategy: 'secret', printerColumns: [col('Type', '.type'), computed('Data', 'dataCount'), age] },
  { group: '', version: 'v1', kind: 'Node', plural: 'nodes', schema: core + 'Node', namespaced: false,
    shortNames: ['no'], status: true, strategy: 'node',
    printerColumns: [computed('Status', 'nodeStatus'), computed('Roles', 'nodeRoles'), age,
      col('Version', '.status.nodeInfo.kubeletVersion'),
      computed('Internal-IP', 'nodeInternalIP', 'string', 1), computed('External-IP', 'nodeExternalIP', 'string', 1),
      computed('OS-Image', 'nodeOSImage', 'string', 1), computed('Kernel-Version', 'nodeKernelVersion', 'string', 1),
      computed('Container-Runtime', 'nodeContainerRuntime', 'string', 1)] },
  { group: '', version: 'v1', kind: 'ServiceAccount', plural: 'serviceaccounts', schema: core + 'ServiceAccount',
    namespaced: true, shortNames: ['sa'], printerColumns: [computed('Secrets', 'serviceAccountSecrets'), age] },
  { group: '', version: 'v1', kind: 'Event', plural: 'events', schema: core + 'Event', namespaced: true,
    shortNames: ['ev'], allowCreateOnUpdate: true,
    printerColumns: [computed('Last Seen', 'eventLastSeen'), col('Type', '.type'), col('Reason', '.reason'),
      computed('Object', 'eventObject'), computed('Subobject', 'eventSubobject', 'string', 1),
      computed('Source', 'eventSource', 'string', 1), computed('Message', 'eventMessage'),
      computed('First Seen', 'eventFirstSeen', 'string', 1), computed('Count', 'eventCount', 'string', 1), nameWide] },
  { group: '', version: 'v1', kind: 'Endpoints', plural: 'endpoints', schema: core + 'Endpoints', namespaced: true,
    shortNames: ['ep'], allowCreateOnUpdate: true, printerColumns: [computed('Endpoints', 'endpoints'), age] },
  { group: '', version: 'v1', kind: 'PersistentVolume', plural: 'persistentvolumes', schema: core + 'PersistentVolume',
    namespaced: false, shortNames: ['pv'], status: true, strategy: 'persistentvolume',
    printerColumns: [computed('Capacity', 'pvCapacity'), computed('Access Modes', 'pvAccessModes'),
      col('Reclaim Policy', '.spec.persistentVolumeReclaimPolicy'), computed('Status', 'pvStatus'),
      computed('Claim', 'pvClaim'), computed('StorageClass', 'pvStorageClass'),
      computed('VolumeAttributesClass', 'pvVolumeAttributesClass'), col('Reason', '.status.reason'), age,
      computed('VolumeMode', 'volumeMode', 'string', 1)] },
  { group: '', version: 'v1', kind: 'PersistentVolumeClaim', plural: 'persistentvolumeclaims',
    schema: core + 'PersistentVolumeClaim', namespaced: true, shortNames: ['pvc'], status: true,
    strategy: 'persistentvolumeclaim',
    printerColumns: [computed('Status', 'pvcStatus'), col('Volume', '.spec.volumeName'),
      computed('Capacity', 'pvcCapacity'), computed('Access Modes', 'pvcAccessModes'),
      computed('StorageClass', 'pvcStorageClass'), computed('VolumeAttributesClass', 'pvcVolumeAttributesClass'), age,
      computed('VolumeMode', 'volumeMode', 'string', 1)] },
  { group: 'apps', version: 'v1', kind: 'Deployment', plural: 'deployments', schema: 'io.orch.api.apps.v1.Deployment',
    namespaced: true, shortNames: ['deploy'], categories: ['all'], status: true, scale: replicasScale,
    strategy: 'deployment', generation: true,
    printerColumns: [computed('Ready', 'replicasReady'), col('Up-to-date', '.status.updatedReplicas', 'integer'),
      col('Available', '.status.availableReplicas', 'integer'), age, ...template()] },
  { group: 'apps', version: 'v1', kind: 'ReplicaSet', plural: 'replicasets', schema: 'io.orch.api.apps.v1.ReplicaSet',
    namespaced: true, shortNames: ['rs'], categories: ['all'], status: true, scale: replicasScale,
    strategy: 'replicaset', generation: true,
    printerColumns: [col('Desired', '.spec.replicas', 'integer'), col('Current', '.status.replicas', 'integer'),
      col('Ready', '.status.readyReplicas', 'integer'), age, ...template()] },
  { group: 'apps', version: 'v1', kind: 'DaemonSet', plural: 'daemonsets', schema: 'io.orch.api.apps.v1.DaemonSet',
    namespaced: true, shortNames: ['ds'], categories: ['all'], status: true, strategy: 'daemonset', generation: true,
    printerColumns: [col('Desired', '.status.desiredNumberScheduled', 'integer'),
      col('Current', '.status.currentNumberScheduled', 'integer'), col('Ready', '.status.numberReady', 'integer'),
      col('Up-to-date', '.status.updatedNumberScheduled', 'integer'),
      col('Available', '.status.numberAvailable', 'integer'), computed('Node Selector', 'daemonSetNodeSelector'), age,
      ...template()] },
  { group: 'apps', version: 'v1', kind: 'StatefulSet', plural: 'statefulsets', schema: 'io.orch.api.apps.v1.StatefulSet',
    namespaced: true, shortNames: ['sts'], categories: ['all'], status: true, scale: replicasScale,
    strategy: 'statefulset', generation: true, printerColumns: [computed('Ready', 'replicasReady'), age, ...template(false)] },
  { group: 'batch', version: 'v1', kind: 'Job', plural: 'jobs', schema: 'io.orch.api.batch.v1.Job',
    namespaced: true, categories: ['all'], status: true, strategy: 'job', generation: true,
    printerColumns: [computed('Completions', 'jobCompletions'), computed('Duration', 'jobDuration'), age, ...template()] },
  { group: 'batch', version: 'v1', kind: 'CronJob', plural: 'cronjobs', schema: 'io.orch.api.batch.v1.CronJob',
    namespaced: true, shortNames: ['cj'], categories: ['all'], status: true, strategy: 'cronjob', generation: true,
    printerColumns: [col('Schedule', '.spec.schedule'), computed('Timezone', 'cronJobTimeZone'),
      computed('Suspend', 'cronJobSuspend', 'boolean'), computed('Active', 'cronJobActive', 'integer'),
      computed('Last Schedule', 'cronJobLastSchedule'), age, ...template()] },
  { group: '', version: 'v1', kind: 'ReplicationController', plural: 'replicationcontrollers', schema: core + 'ReplicationController',
    namespaced: true, shortNames: ['rc'], categories: ['all'], status: true, generation: true,
    scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas', labelSelectorPath: '.status.selector' },
    printerColumns: [col('Desired', '.spec.replicas', 'integer'), col('Current', '.status.replicas', 'integer'),
      col('Ready', '.status.readyReplicas', 'integer'), age, ...template()] },
  { group: '', version: 'v1', kind: 'PodTemplate', plural: 'podtemplates', schema: core + 'PodTemplate', namespaced: true,
    printerColumns: [computed('Containers', 'podTemplateContainers'), computed('Images', 'podTemplateImages'),
      computed('Pod Labels', 'podTemplateLabels')] },
  { group: '', version: 'v1', kind: 'LimitRange', plural: 'limitranges', schema: core + 'LimitRange', namespaced: true,
    shortNames: ['limits'], printerColumns: [col('Created At', '.metadata.creationTimestamp')] },
  { group: '', version: 'v1', kind: 'ResourceQuota', plural: 'resourcequotas', schema: core + 'ResourceQuota', namespaced: true,
    shortNames: ['quota'], status: true, printerColumns: [age, computed('Request', 'quotaRequest'), computed('Limit', 'quotaLimit')] },
  { group: 'apps', version: 'v1', kind: 'ControllerRevision', plural: 'controllerrevisions',
    schema: 'io.orch.api.apps.v1.ControllerRevision', namespaced: true,
    printerColumns: [computed('Controller', 'revisionController'), col('Revision', '.revision', 'integer'), age] },
  { group: 'discovery.orch.io', version: 'v1', kind: 'EndpointSlice', plural: 'endpointslices',
    schema: 'io.orch.api.discovery.v1.EndpointSlice', namespaced: true,
    printerColumns: [col('AddressType', '.addressType'), computed('Ports', 'slicePorts'), computed('Endpoints', 'sliceEndpoints'), age] },
  { group: 'policy', version: 'v1', kind: 'PodDisruptionBudget', plural: 'poddisruptionbudgets',
    schema: 'io.orch.api.policy.v1.PodDisruptionBudget', namespaced: true, shortNames: ['pdb'], status: true, generation: true,
    printerColumns: [computed('Min Available', 'pdbMinAvailable'), computed('Max Unavailable', 'pdbMaxUnavailable'),
      col('Allowed Disruptions', '.status.disruptionsAllowed', 'integer'), age] },
  { group: 'scheduling.orch.io', version: 'v1', kind: 'PriorityClass', plural: 'priorityclasses',
    schema: 'io.orch.api.scheduling.v1.PriorityClass', namespaced: false, shortNames: ['pc'],
    printerColumns: [col('Value', '.value', 'integer'), computed('Global-Default', 'priorityClassGlobalDefault', 'boolean'), age,
      computed('PreemptionPolicy', 'priorityClassPreemption', 'string', 1)] },
  { group: 'node.orch.io', version: 'v1', kind: 'RuntimeClass', plural: 'runtimeclasses',
    schema: 'io.orch.api.node.v1.RuntimeClass', namespaced: false, printerColumns: [col('Handler', '.handler'), age] },
  { group: 'coordination.orch.io', version: 'v1', kind: 'Lease', plural: 'leases',
    schema: 'io.orch.api.coordination.v1.Lease', namespaced: true, allowCreateOnUpdate: true,
    printerColumns: [col('Holder', '.spec.holderIdentity'), age] },
  { group: 'certificates.orch.io', version: 'v1', kind: 'CertificateSigningRequest', plural: 'certificatesigningrequests',
    schema: 'io.orch.api.certificates.v1.CertificateSigningRequest', namespaced: false, shortNames: ['csr'], status: true,
    approval: true, strategy: 'csr', nameValidation: 'path',
    printerColumns: [age, computed('SignerName', 'csrSignerName'), col('Requestor', '.spec.username'),
      computed('RequestedDuration', 'csrRequestedDuration'), computed('Condition', 'csrCondition')] },
  ...(['Mutating', 'Validating'].map((which): KindEntry => ({ group: 'admissionregistration.orch.io', version: 'v1',
    kind: `${which}WebhookConfiguration`, plural: `${which.toLowerCase()}webhookconfigurations`, namespaced: false,
    schema: `io.orch.api.admissionregistration.v1.${which}WebhookConfiguration`, categories: ['api-extensions'],
    strategy: `${which.toLowerCase()}webhookconfiguration`, printerColumns: [computed('Webhooks', 'webhookCount', 'integer'), age] }))),
  ...rbacEntries(),
  { group: 'apiextensions.orch.io', version: 'v1', kind: 'CustomResourceDefinition', plural: 'customresourcedefinitions',
    schema: 'io.orch.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition', namespaced: false,
    shortNames: ['crd', 'crds'], categories: ['api-extensions'], status: true, strategy: 'crd', generation: true },
  // ValidatingAdmissionPolicy (beta in v1.29): policies carry status (type checking) and a generation the status observes.
  { group: 'admissionregistration.orch.io', version: 'v1beta1', kind: 'ValidatingAdmissionPolicy', plural: 'validatingadmissionpolicies',
    schema: 'io.orch.api.admissionregistration.v1beta1.ValidatingAdmissionPolicy', namespaced: false, status: true, generation: true,
    strategy: 'validatingadmissionpolicy' },
  { group: 'admissionregistration.orch.io', version: 'v1beta1', kind: 'ValidatingAdmissionPolicyBinding', plural: 'validatingadmissionpolicybindings',
    schema: 'io.orch.api.admissionregistration.v1beta1.ValidatingAdmissionPolicyBinding', namespaced: false, generation: true,
    strategy: 'validatingadmissionpolicybinding' },
  // Reviews: create-only kinds that are never stored (apiserver/registry/reviews/); the object posted comes back with its status.
  ...(['v1', 'v1beta1', 'v1alpha1'].map(version => review('authentication.orch.io', version, 'SelfSubjectReview'))),
  review('authentication.orch.io', 'v1', 'TokenReview'),
  review('authorization.orch.io', 'v1', 'SubjectAccessReview'),
  review('authorization.orch.io', 'v1', 'SelfSubjectAccessReview'),
  review('authorization.orch.io', 'v1', 'LocalSubjectAccessReview', true),
  review('authorization.orch.io', 'v1', 'SelfSubjectRulesReview'),
]

function review (group: string, version: string, kind: string, namespaced = false): KindEntry {
  return { group, version, kind, plural: kind.toLowerCase() + 's', schema: `io.orch.api.${group.split('.')[0]}.${version}.${kind}`, namespaced, virtual: true }
}

/** The derived definitions with the Go-coded defaults laid over them (a fresh copy). */
export function builtinSchemaDefinitions (overlay: SchemaOverlay = builtinOverlay()): SchemaDefinitions {
  const defs = structuredClone(derived) as unknown as SchemaDefinitions
  for (const [defName, props] of Object.entries(overlay)) {
    const target = defs[defName]?.properties
    if (target === undefined) throw new Error(`overlay names unknown definition ${defName}`)
    for (const [prop, extra] of Object.entries(props)) {
      if (target[prop] === undefined) throw new Error(`overlay names unknown property ${defName}.${prop}`)
      target[prop] = { ...target[prop], ...extra }
    }
  }
  for (const [defName, fields] of Object.entries(requiredOnCreateOnly)) {
    const def = defs[defName]
    if (def?.required !== undefined) def.required = def.required.filter(f => !fields.includes(f))
  }
  return defs
}

/** Kinds whose kube-apiserver store sets `ReturnDeletedObject` (DELETE answers the object, not a Status). */
const returnsDeletedObject = new Set(['/namespaces', '/pods', '/services', '/serviceaccounts', '/persistentvolumes', '/persistentvolumeclaims'])

function build (e: KindEntry, defs: SchemaDefinitions): ResourceDefinition {
  const source = defs[e.schema]
  if (source === undefined) throw new Error(`catalog entry ${e.kind} names unknown definition ${e.schema}`)
  const { 'x-orch-group-version-kind': _gvk, ...schema } = source as StructuralSchema & Record<string, unknown>
  const definitions: SchemaDefinitions = {}
  for (const name of referencedDefinitions(schema, defs)) definitions[name] = defs[name]
  const subresources: ResourceDefinition['subresources'] = {}
  if (e.status === true) subresources.status = true
  if (e.approval === true) subresources.approval = true
  if (e.scale !== undefined) subresources.scale = { ...e.scale }
  const def: ResourceDefinition = {
    group: e.group,
    version: e.version,
    kind: e.kind,
    listKind: `${e.kind}List`,
    plural: e.plural,
    singular: e.kind.toLowerCase(),
    shortNames: [...(e.shortNames ?? [])],
    categories: [...(e.categories ?? [])],
    namespaced: e.namespaced,
    verbs: e.virtual === true ? ['create'] : [...(e.verbs ?? allVerbs)],
    subresources,
    schema,
    definitions,
    printerColumns: (e.printerColumns ?? []).map((c) => ({ ...c })),
    storageVersion: e.storedAs?.version ?? e.version,
    allowCreateOnUpdate: e.allowCreateOnUpdate ?? false,
    nameValidation: e.nameValidation ?? 'subdomain',
  }
  if (e.strategy !== undefined) def.strategy = e.strategy
  if (e.generation === true) def.tracksGeneration = true
  if (e.virtual === true) def.virtual = true
  if (e.storedAs !== undefined && e.storedAs.group !== e.group) def.storageGroup = e.storedAs.group
  if (e.conversion !== undefined) def.conversion = e.conversion
  if (e.deprecated !== undefined) def.deprecated = deprecation(e, e.deprecated)
  if (returnsDeletedObject.has(`${e.group}/${e.plural}`)) def.returnDeletedObject = true
  return def
}

/** Kubernetes' deprecation warning: `<group/version> <Kind> is deprecated in v1.29+, unavailable in v1.32+; use <replacement> <Kind>`. */
function deprecation (e: KindEntry, d: NonNullable<KindEntry['deprecated']>): NonNullable<ResourceDefinition['deprecated']> {
  const gv = e.group === '' ? e.version : `${e.group}/${e.version}`
  return {
    warning: `${gv} ${e.kind} is deprecated in ${d.deprecatedIn}+, unavailable in ${d.removedIn}+; use ${d.replacement} ${e.kind}`,
    removedRelease: d.removedIn.replace(/^v/, '')
  }
}

/** Every catalog entry, served by default or not. */
const allEntries = (): KindEntry[] => [...entries, ...moreEntries()]

/** The group versions the catalog knows (`v1` for the core group), for --runtime-config. */
export function builtinGroupVersions (): Set<string> {
  return new Set(allEntries().map(e => e.group === '' ? e.version : `${e.group}/${e.version}`))
}

/**
 * Every served built-in kind (those --runtime-config leaves on), freshly built on each call (callers may mutate what
 * they get). Within one call, kinds share their definition objects (a Deployment's and a Pod's PodSpec are one object).
 */
export function builtinDefinitions (runtimeConfig: RuntimeConfig = emptyRuntimeConfig): ResourceDefinition[] {
  const defs = builtinSchemaDefinitions()
  return allEntries().filter(e => isServed(runtimeConfig, e)).map((e) => build(e, defs))
}

/** Fresh copies of the named derived definitions and everything they reference (no overlay). */
export function derivedDefinitionClosure (names: string[]): SchemaDefinitions {
  const all = derived as unknown as SchemaDefinitions
  const out: SchemaDefinitions = {}
  for (const name of names) {
    if (all[name] === undefined) throw new Error(`no derived definition ${name}`)
    out[name] = structuredClone(all[name])
    for (const dep of referencedDefinitions(all[name], all)) out[dep] = structuredClone(all[dep])
  }
  return out
}

/** Definitions the OpenAPI documents need besides the kinds (Status, DeleteOptions, List metadata, Scale). */
export const sharedDefinitionNames = [
  'io.orch.apimachinery.pkg.apis.meta.v1.Status',
  'io.orch.apimachinery.pkg.apis.meta.v1.ListMeta',
  'io.orch.apimachinery.pkg.apis.meta.v1.DeleteOptions',
  'io.orch.apimachinery.pkg.apis.meta.v1.WatchEvent',
  'io.orch.api.autoscaling.v1.Scale',
] as const
