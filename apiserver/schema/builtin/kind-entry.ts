// The data shape of one catalog entry (a served built-in group/version/kind) and the column helpers entries share.
import type { PrinterColumn, ResourceDefinition, ScaleSubresource } from '../types.js'

export interface KindEntry {
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
  /** The certificates API's approval subresource. */
  approval?: boolean
  scale?: ScaleSubresource
  printerColumns?: PrinterColumn[]
  strategy?: string
  allowCreateOnUpdate?: boolean
  nameValidation?: NonNullable<ResourceDefinition['nameValidation']>
  /** Objects carry metadata.generation (ResourceDefinition.tracksGeneration). */
  generation?: boolean
  /** Create-only, never stored (ResourceDefinition.virtual): served by registry/reviews/. */
  virtual?: boolean
  /** Stored as another group/version of the same objects (autoscaling/v1 HPAs are stored as v2); absent = this one. */
  storedAs?: { group: string, version: string }
  /** Conversion between this version and the stored one (ResourceDefinition.conversion). */
  conversion?: NonNullable<ResourceDefinition['conversion']>
  /** A deprecated version: Kubernetes' release of its removal and its replacement (`flowcontrol.apiserver.k8s.io/v1`). */
  deprecated?: { deprecatedIn: string, removedIn: string, replacement: string }
  /** Alpha versions (and the beta ones Kubernetes ships off) are served only when --runtime-config enables them. */
  offByDefault?: boolean
  /** Verbs when not all (ComponentStatus is read-only). */
  verbs?: string[]
}

export const allVerbs = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch']
export const replicasScale: ScaleSubresource = {
  specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas', labelSelectorPath: '.spec.selector',
}
export const col = (name: string, jsonPath: string, type: PrinterColumn['type'] = 'string', priority = 0): PrinterColumn =>
  priority === 0 ? { name, type, jsonPath } : { name, type, jsonPath, priority }
/** A column Kubernetes computes in code; `printer` names it in apiserver/endpoints/printers.ts. */
export const computed = (name: string, printer: string, type: PrinterColumn['type'] = 'string', priority = 0): PrinterColumn =>
  ({ ...col(name, '', type, priority), printer })
export const age = col('Age', '.metadata.creationTimestamp', 'date')
/** Name as an explicit column: the list is then the whole table (see apiserver/endpoints/table.ts). */
export const nameWide: PrinterColumn = { name: 'Name', type: 'string', format: 'name', jsonPath: '.metadata.name', priority: 1 }
/** The wide Containers/Images(/Selector) columns of the workload printers. */
export const template = (selector = true): PrinterColumn[] => [computed('Containers', 'templateContainers', 'string', 1),
  computed('Images', 'templateImages', 'string', 1), ...(selector ? [computed('Selector', 'templateSelector', 'string', 1)] : [])]

