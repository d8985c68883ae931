// What a kind may add to the generic store: hooks for what its schema cannot say (allocation, graceful deletion, ...).

import type { FieldError } from '../schema/types.js'
import type { DeleteOptions, RequestContext } from './types.js'
import type { FieldGetter } from './selectors.js'
import type { Obj } from './object-meta.js'

export interface StrategyContext {
  ctx: RequestContext
  /** Milliseconds since the epoch (the registry's clock). */
  now: number
  /** Internal writes by controllers (e.g. namespace finalization) may change what users cannot. */
  internal: boolean
  /** The subresource an update came through (undefined: the main resource); status and approval writes replace only their part. */
  subresource?: 'status' | 'approval'
}

export interface Strategy {
  /** The status sent on create is kept (nodes: an orchlet registers its node with its status, as the kubelet does). */
  keepsStatusOnCreate?: boolean
  /** Field selector fields besides metadata.name and metadata.namespace. */
  fieldLabels?: Record<string, FieldGetter>
  /** After defaulting, before validation, on create. May mutate `obj`; may throw StatusError. */
  prepareForCreate?(obj: Obj, sc: StrategyContext): void | Promise<void>
  /** After merging with the stored object, before validation, on update of the main resource. */
  prepareForUpdate?(obj: Obj, old: Obj, sc: StrategyContext): void | Promise<void>
  /** Extra validation on create and update (field errors become one 422). */
  validate?(obj: Obj): FieldError[] | Promise<FieldError[]>
  /** `internal`: a controller's write (pods/binding sets spec.nodeName, which users may not change). */
  validateUpdate?(obj: Obj, old: Obj, internal: boolean): FieldError[]
  /** Validation that sees both states in one call (CRD rules with transition rules); `old` is absent on create. */
  validateTransition?(obj: Obj, old: Obj | undefined): FieldError[] | Promise<FieldError[]>
  /**
   * Grace period in seconds for a delete of `obj` (0 = remove now). Only kinds with graceful deletion
   * (pods) implement it.
   */
  gracePeriodSeconds?(obj: Obj, opts: DeleteOptions): number
  /** Holds the object after deletionTimestamp even without metadata.finalizers (namespaces' spec.finalizers). */
  holdsDeletion?(obj: Obj): boolean
  /** Called when deletion starts (deletionTimestamp is being set); may mutate (e.g. phase Terminating). */
  beginDelete?(obj: Obj): void
  /** After the object left storage (release allocated resources). Errors are logged, not thrown. */
  afterDelete?(obj: Obj): void | Promise<void>
  /** Extra check before a delete (e.g. protected namespaces); may throw StatusError. */
  admitDelete?(obj: Obj): void
  /** Extra check before a create (e.g. CRD terminating); may throw StatusError. */
  admitCreate?(obj: Obj, sc: StrategyContext): void | Promise<void>
}
