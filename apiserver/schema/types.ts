// The shape of a kind: structural OpenAPI v3 schemas with x-orch-* markers, and the resource definition built on one.

/** A CEL validation rule on a schema node (x-orch-validations), as a CRD declares it. */
export interface ValidationRule {
  rule: string
  message?: string
  messageExpression?: string
  reason?: 'FieldValueInvalid' | 'FieldValueForbidden' | 'FieldValueRequired' | 'FieldValueDuplicate'
  fieldPath?: string
  optionalOldSelf?: boolean
}

/**
 * A structural schema node (the subset of JSON Schema a CRD's openAPIV3Schema allows, plus markers).
 * `$ref` names an entry of the owning definition's `definitions` map; built-in kinds use it for
 * shared and recursive types (e.g. ObjectMeta, JSONSchemaProps). Everything else is inline.
 */
export interface StructuralSchema {
  $ref?: string
  type?: 'object' | 'array' | 'string' | 'integer' | 'number' | 'boolean'
  format?: string
  description?: string
  properties?: Record<string, StructuralSchema>
  additionalProperties?: StructuralSchema | boolean
  items?: StructuralSchema
  required?: string[]
  enum?: unknown[]
  default?: unknown
  nullable?: boolean
  pattern?: string
  minLength?: number
  maxLength?: number
  minItems?: number
  maxItems?: number
  minProperties?: number
  maxProperties?: number
  minimum?: number
  maximum?: number
  exclusiveMinimum?: boolean
  exclusiveMaximum?: boolean
  multipleOf?: number
  uniqueItems?: boolean
  allOf?: StructuralSchema[]
  anyOf?: StructuralSchema[]
  oneOf?: StructuralSchema[]
  not?: StructuralSchema
  'x-orch-preserve-unknown-fields'?: boolean
  'x-orch-embedded-resource'?: boolean
  'x-orch-int-or-string'?: boolean
  'x-orch-list-type'?: 'atomic' | 'set' | 'map'
  'x-orch-list-map-keys'?: string[]
  'x-orch-map-type'?: 'atomic' | 'granular'
  'x-orch-patch-merge-key'?: string
  'x-orch-patch-strategy'?: string
  'x-orch-validations'?: ValidationRule[]
}

/** Named schemas a definition's `$ref`s point into (keys like "io.orch.api.core.v1.PodSpec"). */
export type SchemaDefinitions = Record<string, StructuralSchema>

export interface PrinterColumn {
  name: string
  type: 'integer' | 'number' | 'string' | 'boolean' | 'date'
  format?: string
  description?: string
  priority?: number
  jsonPath: string
  /**
   * For built-in kinds only: the name of a computed column (apiserver/endpoints/printers.ts) used instead
   * of `jsonPath`, for cells Kubernetes computes in code (a pod's READY `1/2`, a node's `Ready`).
   */
  printer?: string
}

export interface ScaleSubresource {
  specReplicasPath: string
  statusReplicasPath: string
  labelSelectorPath?: string
}

/** Everything the registry, endpoints, discovery and OpenAPI need to serve one group/version/kind. */
export interface ResourceDefinition {
  group: string
  version: string
  kind: string
  listKind: string
  /** Resource type in URLs (lowercase plural). */
  plural: string
  singular: string
  shortNames: string[]
  categories: string[]
  namespaced: boolean
  /** Verbs of the main resource, in discovery order (get, list, watch, create, update, patch, delete, deletecollection). */
  verbs: string[]
  subresources: { status?: boolean; scale?: ScaleSubresource; /** certificatesigningrequests/approval (the conditions only). */ approval?: boolean }
  /** The root schema of the object (properties apiVersion, kind, metadata, spec, status, ...). */
  schema: StructuralSchema
  /** Targets of `$ref` inside `schema`. */
  definitions: SchemaDefinitions
  /** Columns of the Table view besides Name (Created At/Age is added by the server). */
  printerColumns: PrinterColumn[]
  /** The version objects are stored in; for built-ins always the served version. */
  storageVersion: string
  /** Name of a strategy (registry/strategies/) adding what the schema cannot say; absent = generic only. */
  strategy?: string
  /** Whether PUT on a missing object creates it (Kubernetes allows it for a few kinds, e.g. Lease? no: Node/Namespace? no). */
  allowCreateOnUpdate: boolean
  /**
   * DELETE answers the deleted object (kube-apiserver's `ReturnDeletedObject`: pods, services, ...); absent =
   * a `Status` of success naming it. While finalizers keep the object it is answered either way.
   */
  returnDeletedObject?: boolean
  /** How `metadata.name` is checked: DNS-1123 subdomain (absent = this), DNS-1123 label, DNS-1035 label (Service), or path segment (RBAC-like). */
  nameValidation?: 'subdomain' | 'label' | 'dns1035' | 'path'
  /**
   * Whether objects carry `metadata.generation` (1 on create, +1 on each spec change and on the start of a
   * graceful deletion), as Kubernetes' kinds with a spec/status split do. Custom resources always do.
   */
  tracksGeneration?: boolean
  /**
   * Create-only and never stored (TokenReview, SubjectAccessReview, ...; registry/reviews/): POST answers the
   * object with its status filled, and nothing else is served. `verbs` is then ['create'].
   */
  virtual?: boolean
  /** Set for kinds that came from a CustomResourceDefinition. */
  custom?: { crdName: string; preserveUnknownFieldsAtRoot: boolean }
  /**
   * The group objects are stored under, when the kind is also served under another name: `*.orch.io` groups are
   * served under their Kubernetes names too (`apiextensions.k8s.io`), as the same objects. Absent = `group`.
   */
  storageGroup?: string
  /**
   * Set for a deprecated version (a CRD version with `deprecated: true`): its requests are annotated
   * `orch.io/deprecated` in the audit log, and `warning` is the text clients are warned with.
   */
  deprecated?: { warning: string; removedRelease?: string }
  /**
   * How objects convert between this version and the stored one when they differ by more than apiVersion (named
   * converters in registry/conversions/): `hpa` autoscaling v1<->v2, `event` events.k8s.io v1<->core v1, `flowcontrol`
   * v1beta3<->v1. Absent = only apiVersion changes.
   */
  conversion?: 'hpa' | 'event' | 'flowcontrol'
}

/** A field-level validation error; becomes one `details.causes` entry of a 422. */
export interface FieldError {
  /** A Kubernetes CauseType: FieldValueRequired, FieldValueInvalid, FieldValueNotSupported, FieldValueTypeInvalid, FieldValueDuplicate, FieldValueTooLong, FieldValueTooMany, FieldValueForbidden. */
  type: string
  /** Dotted path with indexes/keys, e.g. `spec.containers[0].name`, `metadata.labels[app]`. */
  field: string
  /** Full message as Kubernetes prints it after `field: `, e.g. `Required value` or `Invalid value: "x": must be ...`. */
  message: string
}
