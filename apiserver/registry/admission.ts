// Write admission, as kube-apiserver's chain: mutating plugins before validation (which then sees what they changed),
// validating plugins (RBAC escalation prevention, NodeRestriction, ...) after validation, before the write.

import type { ResourceDefinition } from '../schema/types.js'
import type { RequestContext } from './types.js'
import type { Obj } from './object-meta.js'

/** CONNECT: pods/exec, attach, portforward and the proxies (connect-admission.ts); the object is the options object. */
export type WriteOperation = 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT'

/**
 * One write as an admission plugin sees it. A validating plugin sees the validated objects and must not change them;
 * a mutating plugin may change `object` in place (CREATE, UPDATE). `ctx.dryRun` tells a dry-run; `ctx.warnings`
 * takes warnings for the client.
 */
export interface WriteAttributes {
  operation: WriteOperation
  definition: ResourceDefinition
  namespace: string
  name: string
  /** 'status' for a status write; '' for the main resource. */
  subresource: string
  /**
   * The object to be stored (CREATE, UPDATE), the stored one being deleted (DELETE), or the request's options
   * (CONNECT: PodExecOptions, PodAttachOptions, PodPortForwardOptions, PodProxyOptions, ...; `definition.kind` is
   * then that kind).
   */
  object: Obj
  /** The stored object an UPDATE replaces. */
  oldObject?: Obj
  ctx: RequestContext
}

/** A check that may refuse a write by throwing a StatusError (403 Forbidden, as admission plugins do). */
export interface WriteAdmission {
  admit(a: WriteAttributes): Promise<void>
}

/** A plugin that may change the object of a CREATE or UPDATE; may refuse by throwing a StatusError. */
export interface MutatingAdmission {
  admit(a: WriteAttributes): Promise<void>
}

/** Runs the checks in order; the first refusal wins. */
export function chainAdmission (checks: WriteAdmission[]): WriteAdmission | undefined {
  if (checks.length === 0) return undefined
  return {
    async admit (a) {
      for (const c of checks) await c.admit(a)
    }
  }
}
