// What controllers and the scheduler use to reach the API: one interface, an in-process and an HTTP transport.

export type Obj = Record<string, any> // eslint-disable-line @typescript-eslint/no-explicit-any

export interface Resource {
  group: string
  version: string
  /** Plural resource name (`pods`). */
  resource: string
  namespaced: boolean
}

export interface ListOptions {
  labelSelector?: string
  fieldSelector?: string
  limit?: number
  continue?: string
  resourceVersion?: string
}

export interface ObjectList {
  items: Obj[]
  resourceVersion: string
  continue: string
}

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR'

export interface WatchHandlers {
  /** Objects are shared with other watchers: never mutate them. */
  event(type: WatchEventType, object: Obj): void
  /** The watch ended (by the server, an error, or `stop`). */
  end(err?: Error): void
}

export interface WatchOptions {
  labelSelector?: string
  fieldSelector?: string
  resourceVersion: string
}

export interface DeleteOptions {
  propagationPolicy?: 'Orphan' | 'Background' | 'Foreground'
  gracePeriodSeconds?: number
  preconditions?: { uid?: string, resourceVersion?: string }
}

/**
 * One resource. Errors are thrown as StatusError (`code` 404, 409, ...). `namespace` is '' for cluster-scoped
 * resources and for lists across all namespaces.
 */
export interface ResourceClient {
  /** `scale`: the autoscaling/v1 Scale of a resource with the scale subresource. */
  get(namespace: string, name: string, subresource?: 'scale'): Promise<Obj | undefined>
  list(namespace: string, opts?: ListOptions): Promise<ObjectList>
  watch(namespace: string, opts: WatchOptions, handlers: WatchHandlers): Promise<{ stop(): void }>
  create(namespace: string, object: Obj): Promise<Obj>
  /**
   * PUT of the whole object (optimistic concurrency by its resourceVersion); `status` writes the status subresource,
   * `approval` a CertificateSigningRequest's approval conditions.
   */
  update(namespace: string, object: Obj, subresource?: 'status' | 'approval' | 'scale'): Promise<Obj>
  /** JSON merge patch (RFC 7386). */
  patch(namespace: string, name: string, patch: Obj, subresource?: 'status'): Promise<Obj>
  delete(namespace: string, name: string, opts?: DeleteOptions): Promise<void>
  /** POST to a create-only subresource (pods/binding, pods/eviction). */
  createSubresource(namespace: string, name: string, subresource: string, body: Obj): Promise<Obj>
}

export interface ApiClient {
  resource(r: Resource): ResourceClient
  /** Who writes: names the field manager and the Events' reporting component. */
  readonly userAgent: string
}

export const RESOURCES = {
  pods: { group: '', version: 'v1', resource: 'pods', namespaced: true },
  nodes: { group: '', version: 'v1', resource: 'nodes', namespaced: false },
  namespaces: { group: '', version: 'v1', resource: 'namespaces', namespaced: false },
  services: { group: '', version: 'v1', resource: 'services', namespaced: true },
  endpoints: { group: '', version: 'v1', resource: 'endpoints', namespaced: true },
  events: { group: '', version: 'v1', resource: 'events', namespaced: true },
  serviceAccounts: { group: '', version: 'v1', resource: 'serviceaccounts', namespaced: true },
  configMaps: { group: '', version: 'v1', resource: 'configmaps', namespaced: true },
  secrets: { group: '', version: 'v1', resource: 'secrets', namespaced: true },
  replicationControllers: { group: '', version: 'v1', resource: 'replicationcontrollers', namespaced: true },
  resourceQuotas: { group: '', version: 'v1', resource: 'resourcequotas', namespaced: true },
  deployments: { group: 'apps', version: 'v1', resource: 'deployments', namespaced: true },
  replicaSets: { group: 'apps', version: 'v1', resource: 'replicasets', namespaced: true },
  statefulSets: { group: 'apps', version: 'v1', resource: 'statefulsets', namespaced: true },
  daemonSets: { group: 'apps', version: 'v1', resource: 'daemonsets', namespaced: true },
  controllerRevisions: { group: 'apps', version: 'v1', resource: 'controllerrevisions', namespaced: true },
  jobs: { group: 'batch', version: 'v1', resource: 'jobs', namespaced: true },
  cronJobs: { group: 'batch', version: 'v1', resource: 'cronjobs', namespaced: true },
  endpointSlices: { group: 'discovery.orch.io', version: 'v1', resource: 'endpointslices', namespaced: true },
  podDisruptionBudgets: { group: 'policy', version: 'v1', resource: 'poddisruptionbudgets', namespaced: true },
  priorityClasses: { group: 'scheduling.orch.io', version: 'v1', resource: 'priorityclasses', namespaced: false },
  runtimeClasses: { group: 'node.orch.io', version: 'v1', resource: 'runtimeclasses', namespaced: false },
  leases: { group: 'coordination.orch.io', version: 'v1', resource: 'leases', namespaced: true },
  horizontalPodAutoscalers: { group: 'autoscaling', version: 'v2', resource: 'horizontalpodautoscalers', namespaced: true },
  certificateSigningRequests: { group: 'certificates.orch.io', version: 'v1', resource: 'certificatesigningrequests', namespaced: false }
} as const satisfies Record<string, Resource>
