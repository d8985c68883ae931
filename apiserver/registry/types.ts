// The registry's contract with the HTTP layer: per-resource handlers speaking parsed requests and served bytes.

import type { ResourceDefinition } from '../schema/types.js'
import type { StatusError } from '../errors/status-error.js'
import type { WatchBatch } from './watch-batch.js'

export interface UserInfo {
  username: string
  uid?: string
  groups: string[]
  extra?: Record<string, string[]>
}

export type FieldValidation = 'Ignore' | 'Warn' | 'Strict'

/** What one request carries into the registry. Built by the HTTP layer; warnings flow back out. */
export interface RequestContext {
  user: UserInfo
  /** dryRun=All: run every stage but persist nothing. */
  dryRun: boolean
  fieldManager?: string
  fieldValidation: FieldValidation
  userAgent?: string
  /** The registry appends here; the HTTP layer writes one `Warning: 299 - "<text>"` header each. */
  warnings: string[]
  /**
   * Audit annotations admission plugins add (PodSecurity's `pod-security.kubernetes.io/audit-violations`, webhooks'
   * `<webhook name>/<key>`, ValidatingAdmissionPolicy's Audit action), as kube-apiserver's `AddAnnotation`; the audit layer records them on the event.
   */
  auditAnnotations?: Record<string, string>
}

/** A request body after media decoding: the object and the paths of duplicate fields the decoder met. */
export interface DecodedObject {
  object: Record<string, unknown>
  /** e.g. ["spec.replicas", "metadata.labels.app"] in the order met; reported per fieldValidation. */
  duplicateFields: string[]
}

export interface GetOptions {
  resourceVersion?: string
}

export interface ListQuery {
  labelSelector?: string
  fieldSelector?: string
  limit?: number
  continue?: string
  resourceVersion?: string
  resourceVersionMatch?: 'Exact' | 'NotOlderThan'
  /**
   * The caller takes a streamed answer: an unlimited list may then hold only its first items in `items` and the
   * rest in `ListResult.rest`, read from the store chunk by chunk as it is iterated, each chunk's items joined by
   * `separator`.
   */
  stream?: { separator: Buffer }
}

export interface WatchQuery {
  labelSelector?: string
  fieldSelector?: string
  resourceVersion?: string
  resourceVersionMatch?: 'Exact' | 'NotOlderThan'
  allowWatchBookmarks?: boolean
  sendInitialEvents?: boolean
  /** Watch of a single object (GET .../name?watch=1) is a field selector on metadata.name. */
  name?: string
}

export interface DeleteOptions {
  preconditions?: { uid?: string; resourceVersion?: string }
  propagationPolicy?: 'Orphan' | 'Background' | 'Foreground'
  gracePeriodSeconds?: number
  orphanDependents?: boolean
}

/** The served bytes of one object (canonical JSON with resourceVersion) and the parsed form when at hand. */
export interface ObjectResult {
  bytes: Buffer
  object: Record<string, unknown>
}

export interface ListResult {
  /** Served bytes of each item, in key order. */
  items: Buffer[]
  resourceVersion: string
  /** Token for the next chunk; '' at the end. */
  continue: string
  remainingItemCount?: number
  /**
   * Only when the query asked for a stream: the items after `items`, in key order from the same snapshot, one buffer
   * per chunk (its items joined by the query's separator), each read when the iteration asks for it (so a consumer
   * that waits for its client paces the reads). Iterate it once; a storage error surfaces as a StatusError thrown by
   * the iteration.
   */
  rest?: AsyncIterable<Buffer>
  /**
   * Only when the query asked for a stream: the page's items as one buffer, joined by the query's separator, in place
   * of `items` (then empty); before `rest` when both are there.
   */
  joined?: Buffer
}

export type ApiWatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR'

/** One event as the hub shares it between all matching watchers. */
export interface ApiWatchEvent {
  type: ApiWatchEventType
  /** Served JSON bytes of the object (for BOOKMARK: a minimal object of the kind with only resourceVersion). */
  raw: Buffer
  /** The parsed object, parsed at most once per event and shared; do not mutate. */
  object(): Record<string, unknown>
  resourceVersion: string
}

/** Turns an event into wire bytes for one media type; the hub calls it once per event per `key`. */
export interface WatchEncoder {
  key: string
  encode(event: ApiWatchEvent): Buffer
}

/** Where a watcher's bytes go. `write` is called at most once per tick with everything pending. */
export interface WatchSink {
  write(chunks: Buffer[]): void
  /**
   * Optional: receives the same batch object every watcher with the same events in this tick gets, so the
   * joined and framed bytes are made once (an HTTP sink writes `batch.chunkedFrame()` to its socket).
   * When present the hub calls it instead of `write`.
   */
  writeShared?(batch: WatchBatch): void
  /** The watch ended (error: a final ERROR event was already written if the encoder could). */
  end(err?: StatusError): void
}

export interface WatchSubscription {
  stop(): void
}

export interface DeleteResult extends ObjectResult {
  /** False when finalizers or graceful deletion keep the object (answer 202). */
  deleted: boolean
}

/** `approval`: certificatesigningrequests/approval, whose writes change only status.conditions. */
export type Subresource = 'status' | 'scale' | 'approval'

/** Serves one resource (group/version/plural). Methods throw StatusError. `namespace` is '' for cluster scope. */
export interface ResourceHandler {
  readonly definition: ResourceDefinition
  get(ctx: RequestContext, namespace: string, name: string, opts: GetOptions, subresource?: Subresource): Promise<ObjectResult | Buffer>
  list(ctx: RequestContext, namespace: string, query: ListQuery): Promise<ListResult>
  watch(ctx: RequestContext, namespace: string, query: WatchQuery, encoder: WatchEncoder, sink: WatchSink): Promise<WatchSubscription>
  create(ctx: RequestContext, namespace: string, body: DecodedObject): Promise<ObjectResult>
  /** PUT: `created` is true when the kind allows create-on-update and the object was missing. */
  update(ctx: RequestContext, namespace: string, name: string, body: DecodedObject, subresource?: Subresource): Promise<ObjectResult & { created: boolean }>
  /**
   * PATCH: `apply` turns the current object (served form; for `scale` the Scale view) into the wanted one; the
   * result is written as an update would be. Read-modify-write, retried on conflicts unless the patched object
   * names another `metadata.resourceVersion` than the current one (409). `duplicateFields` are the patch
   * document's duplicate members, reported per fieldValidation like a decoded body's.
   */
  patch(ctx: RequestContext, namespace: string, name: string, apply: (current: Record<string, unknown>) => Record<string, unknown>,
    subresource?: Subresource, duplicateFields?: string[]): Promise<ObjectResult>
  /**
   * Server-side apply of `config` (an apply-patch+yaml body) as `ctx.fieldManager`: creates the object when missing
   * (`created`), answers the stored object unchanged for a no-op, 409 on conflicts unless `force`.
   */
  apply(ctx: RequestContext, namespace: string, name: string, config: Record<string, unknown>, force: boolean,
    subresource?: Subresource, duplicateFields?: string[]): Promise<ObjectResult & { created: boolean }>
  delete(ctx: RequestContext, namespace: string, name: string, opts: DeleteOptions): Promise<DeleteResult>
  deleteCollection(ctx: RequestContext, namespace: string, query: ListQuery, opts: DeleteOptions): Promise<ListResult>
}

/** What a POST on a subresource of its own answers (pods/binding and pods/eviction answer a Success Status). */
export interface SubresourceResult {
  status: number
  object: Record<string, unknown>
}

/** A subresource served by its own handler, which only creates (POST): pods/binding, pods/eviction. */
export interface SubresourceCreater {
  /** The body's accepted apiVersions and kind (400 for another). */
  readonly requestKind: { apiVersions: string[], kind: string }
  create(ctx: RequestContext, namespace: string, name: string, body: DecodedObject): Promise<SubresourceResult>
}

/**
 * A create-only resource that is never stored (TokenReview, SubjectAccessReview, ...: definition.virtual), as
 * kube-apiserver's REST storage for reviews, which implements only rest.Creater: there is no get, list or watch.
 */
export interface Creater {
  readonly definition: ResourceDefinition
  /**
   * POST on the collection (`namespace` '' for cluster scope): checks the body as a decoder would, then answers
   * the object with its status filled (201). Writes nothing; dry-run changes nothing either.
   */
  create(ctx: RequestContext, namespace: string, body: DecodedObject): Promise<SubresourceResult>
}

/** What a connect request reaches: a subresource (`exec`, `proxy`, ...) of one object. */
export interface ConnectTarget {
  group: string
  version: string
  resource: string
  subresource: string
  namespace: string
  name: string
}

/** All served resources; the set changes as CustomResourceDefinitions come and go. */
export interface Registry {
  /** Every served definition (all groups and versions), in a stable order. */
  definitions(): ResourceDefinition[]
  /** The handler for group ('' = core) / version / plural, or undefined (also for a create-only resource). */
  handler(group: string, version: string, plural: string): ResourceHandler | undefined
  /** A create-only, never-stored resource (definition.virtual), or undefined. */
  creater(group: string, version: string, plural: string): Creater | undefined
  /** A POST-only subresource with its own handler (`pods`, `binding`), or undefined. */
  subresource(group: string, version: string, plural: string, subresource: string): SubresourceCreater | undefined
  /**
   * Admission of a connect request (pods/exec, attach, portforward, the proxies) with operation CONNECT: `options`
   * is the options object (PodExecOptions, ...), which mutating admission may change. Throws the refusal.
   */
  admitConnect(ctx: RequestContext, target: ConnectTarget, options: Record<string, unknown>): Promise<void>
  /** Names of the POST-only subresources of a resource (for discovery). */
  subresourceNames(group: string, version: string, plural: string): string[]
  /**
   * The namespace as the registry's own namespace watch last delivered it, never to be changed (admission reads
   * labels from it, as kube-apiserver's plugins read an informer's lister); undefined when not known there: read it.
   */
  knownNamespace(name: string): Readonly<Record<string, unknown>> | undefined
  /** Called after the served set changed (a CRD was established or removed). Returns an unsubscribe. */
  onDefinitionsChanged(listener: () => void): () => void
  /** Starts background work (namespace finalization, CRD serving, compaction tick); resolves when ready. */
  start(): Promise<void>
  /** Stops background work and ends every watch. */
  stop(): Promise<void>
}
