// The served built-in kinds: one data entry per kind, built into ResourceDefinitions from the derived schemas.
//
// Adding a kind is adding an entry to `entries` (its definition must exist in definitions.json; re-run
// derive/derive-builtin.ts if it does not). Printer columns are only the ones a JSONPath can answer
// honestly; computed ones (Pod READY/RESTARTS, Node STATUS, Deployment READY, ...) belong to the named
// strategy. Scale paths of built-ins: `labelSelectorPath` names the LabelSelector object (`.spec.selector`),
// which the scale subresource renders as a selector string, unlike a CRD's path to a string field.
import derived from './definitions.json' with { type: 'json' }
import { builtinOverlay, type SchemaOverlay } from './defaults.js'
import { referencedDefinitions } from '../resolve.js'
import type { PrinterColumn, ResourceDefinition, ScaleSubresource, SchemaDefinitions, StructuralSchema } from '../types.js'

interface KindEntry {
  group: string
  version: string
  kind: string
  plural: string
  /** orch definition name of the kind's schema. */
  schema: string
  namespaced: boolean
  shortNames?: string[]
  categories?: string[]
  status?: boolean
  scale?: ScaleSubresource
  printerColumns?: PrinterColumn[]
  strategy?: string
  allowCreateOnUpdate?: boolean
  nameValidation?: NonNullable<ResourceDefinition['nameValidation']>
}

const allVerbs = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch']
const replicasScale: ScaleSubresource = {
  specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas', labelSelectorPath: '.spec.selector',
}
const col = (name: string, jsonPath: string, type: PrinterColumn['type'] = 'string', priority = 0): PrinterColumn =>
  priority === 0 ? { name, type, jsonPath } : { name, type, jsonPath, priority }

/** A column Kubernetes computes in code; `printer` names it in apiserver/endpoints/printers.ts. */
const computed = (name: string, printer: string, type: PrinterColumn['type'] = 'string', priority = 0): PrinterColumn =>
  ({ ...col(name, '', type, priority), printer })
const age = col('Age', '.metadata.creationTimestamp', 'date')

const core = 'io.orch.api.core.v1.'
const entries: KindEntry[] = [
  { group: '', version: 'v1', kind: 'Namespace', plural: 'namespaces', schema: core + 'Namespace', namespaced: false,
    shortNames: ['ns'], status: true, strategy: 'namespace', nameValidation: 'label',
    printerColumns: [col('Status', '.status.phase')] },
  { group: '', version: 'v1', kind: 'Pod', plural: 'pods', schema: core + 'Pod', namespaced: true,
    shortNames: ['po'], categories: ['all'], status: true, strategy: 'pod',
    printerColumns: [computed('Ready', 'podReady'), computed('Status', 'podStatus'),
      computed('Restarts', 'podRestarts', 'integer'), age, col('IP', '.status.podIP', 'string', 1),
      col('Node', '.spec.nodeName', 'string', 1)] },
  { group: '', version: 'v1', kind: 'Service', plural: 'services', schema: core + 'Service', namespaced: true,
    shortNames: ['svc'], categories: ['all'], status: true, strategy: 'service', nameValidation: 'dns1035',
    printerColumns: [col('Type', '.spec.type'), col('Cluster-IP', '.spec.clusterIP'),
      computed('External-IP', 'serviceExternalIP'), computed('Port(s)', 'servicePorts'), age] },
  { group: '', version: 'v1', kind: 'ConfigMap', plural: 'configmaps', schema: core + 'ConfigMap', namespaced: true,
    shortNames: ['cm'], printerColumns: [computed('Data', 'dataCount', 'integer'), age] },
  { group: '', version: 'v1', kind: 'Secret', plural: 'secrets', schema: core + 'Secret', namespaced: true,
    strategy: 'secret', printerColumns: [col('Type', '.type'), computed('Data', 'dataCount', 'integer'), age] },
  { group: '', version: 'v1', kind: 'Node', plural: 'nodes', schema: core + 'Node', namespaced: false,
    shortNames: ['no'], status: true, strategy: 'node',
    printerColumns: [computed('Status', 'nodeStatus'), computed('Roles', 'nodeRoles'), age,
      col('Version', '.status.nodeInfo.kubeletVersion'),
      col('OS-Image', '.status.nodeInfo.osImage', 'string', 1),
      col('Kernel-Version', '.status.nodeInfo.kernelVersion', 'string', 1),
      col('Container-Runtime', '.status.nodeInfo.containerRuntimeVersion', 'string', 1)] },
  { group: '', version: 'v1', kind: 'ServiceAccount', plural: 'serviceaccounts', schema: core + 'ServiceAccount',
    namespaced: true, shortNames: ['sa'] },
  { group: '', version: 'v1', kind: 'Event', plural: 'events', schema: core + 'Event', namespaced: true,
    shortNames: ['ev'], allowCreateOnUpdate: true,
    printerColumns: [computed('Last Seen', 'eventLastSeen', 'date'), col('Type', '.type'), col('Reason', '.reason'),
      computed('Object', 'eventObject'), col('Message', '.message'), col('Count', '.count', 'integer', 1)] },
  { group: '', version: 'v1', kind: 'Endpoints', plural: 'endpoints', schema: core + 'Endpoints', namespaced: true,
    shortNames: ['ep'], allowCreateOnUpdate: true },
  { group: '', version: 'v1', kind: 'PersistentVolume', plural: 'persistentvolumes', schema: core + 'PersistentVolume',
    namespaced: false, shortNames: ['pv'], status: true, strategy: 'persistentvolume',
    printerColumns: [col('Capacity', '.spec.capacity.storage'),
      col('Reclaim Policy', '.spec.persistentVolumeReclaimPolicy'), col('Status', '.status.phase'),
      col('StorageClass', '.spec.storageClassName'), col('Reason', '.status.reason'),
      col('VolumeMode', '.spec.volumeMode', 'string', 1)] },
  { group: '', version: 'v1', kind: 'PersistentVolumeClaim', plural: 'persistentvolumeclaims',
    schema: core + 'PersistentVolumeClaim', namespaced: true, shortNames: ['pvc'], status: true,
    strategy: 'persistentvolumeclaim',
    printerColumns: [col('Status', '.status.phase'), col('Volume', '.spec.volumeName'),
      col('Capacity', '.status.capacity.storage'), col('StorageClass', '.spec.storageClassName'),
      col('VolumeMode', '.spec.volumeMode', 'string', 1)] },
  { group: 'apps', version: 'v1', kind: 'Deployment', plural: 'deployments', schema: 'io.orch.api.apps.v1.Deployment',
    namespaced: true, shortNames: ['deploy'], categories: ['all'], status: true, scale: replicasScale,
    strategy: 'deployment',
    printerColumns: [computed('Ready', 'replicasReady'), col('Up-to-date', '.status.updatedReplicas', 'integer'),
      col('Available', '.status.availableReplicas', 'integer'), age] },
  { group: 'apps', version: 'v1', kind: 'ReplicaSet', plural: 'replicasets', schema: 'io.orch.api.apps.v1.ReplicaSet',
    namespaced: true, shortNames: ['rs'], categories: ['all'], status: true, scale: replicasScale,
    strategy: 'replicaset',
    printerColumns: [col('Desired', '.spec.replicas', 'integer'), col('Current', '.status.replicas', 'integer'),
      col('Ready', '.status.readyReplicas', 'integer')] },
  { group: 'apps', version: 'v1', kind: 'DaemonSet', plural: 'daemonsets', schema: 'io.orch.api.apps.v1.DaemonSet',
    namespaced: true, shortNames: ['ds'], categories: ['all'], status: true, strategy: 'daemonset',
    printerColumns: [col('Desired', '.status.desiredNumberScheduled', 'integer'),
      col('Current', '.status.currentNumberScheduled', 'integer'), col('Ready', '.status.numberReady', 'integer'),
      col('Up-to-date', '.status.updatedNumberScheduled', 'integer'),
      col('Available', '.status.numberAvailable', 'integer')] },
  { group: 'apps', version: 'v1', kind: 'StatefulSet', plural: 'statefulsets', schema: 'io.orch.api.apps.v1.StatefulSet',
    namespaced: true, shortNames: ['sts'], categories: ['all'], status: true, scale: replicasScale,
    strategy: 'statefulset', printerColumns: [computed('Ready', 'replicasReady'), age] },
  { group: 'batch', version: 'v1', kind: 'Job', plural: 'jobs', schema: 'io.orch.api.batch.v1.Job',
    namespaced: true, categories: ['all'], status: true, strategy: 'job',
    printerColumns: [computed('Completions', 'jobCompletions'), age] },
  { group: 'batch', version: 'v1', kind: 'CronJob', plural: 'cronjobs', schema: 'io.orch.api.batch.v1.CronJob',
    namespaced: true, shortNames: ['cj'], categories: ['all'], status: true, strategy: 'cronjob',
    printerColumns: [col('Schedule', '.spec.schedule'), col('Timezone', '.spec.timeZone'),
      col('Suspend', '.spec.suspend', 'boolean'), col('Last Schedule', '.status.lastScheduleTime', 'date')] },
  { group: 'coordination.orch.io', version: 'v1', kind: 'Lease', plural: 'leases',
    schema: 'io.orch.api.coordination.v1.Lease', namespaced: true, allowCreateOnUpdate: true,
    printerColumns: [col('Holder', '.spec.holderIdentity')] },
  { group: 'apiextensions.orch.io', version: 'v1', kind: 'CustomResourceDefinition', plural: 'customresourcedefinitions',
    schema: 'io.orch.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition', namespaced: false,
    shortNames: ['crd', 'crds'], status: true, strategy: 'crd' },
]

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
  return defs
}

function build (e: KindEntry, defs: SchemaDefinitions): ResourceDefinition {
  const source = defs[e.schema]
  if (source === undefined) throw new Error(`catalog entry ${e.kind} names unknown definition ${e.schema}`)
  const { 'x-orch-group-version-kind': _gvk, ...schema } = source as StructuralSchema & Record<string, unknown>
  const definitions: SchemaDefinitions = {}
  for (const name of referencedDefinitions(schema, defs)) definitions[name] = defs[name]
  const subresources: ResourceDefinition['subresources'] = {}
  if (e.status === true) subresources.status = true
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
    verbs: [...allVerbs],
    subresources,
    schema,
    definitions,
    printerColumns: (e.printerColumns ?? []).map((c) => ({ ...c })),
    storageVersion: e.version,
    allowCreateOnUpdate: e.allowCreateOnUpdate ?? false,
    nameValidation: e.nameValidation ?? 'subdomain',
  }
  if (e.strategy !== undefined) def.strategy = e.strategy
  return def
}

/**
 * Every served built-in kind, freshly built on each call (callers may mutate what they get). Within one
 * call, kinds share their definition objects (a Deployment's and a Pod's PodSpec are one object).
 */
export function builtinDefinitions (): ResourceDefinition[] {
  const defs = builtinSchemaDefinitions()
  return entries.map((e) => build(e, defs))
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
