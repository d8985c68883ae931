// Wiring of authorization for a server: the registry's write checks first, then (with the registry) the RBAC and Node authorizers.
// Two steps because the authorizers watch the registry and the registry's checks ask the authorizers.

import type { Registry } from '../registry/types.js'
import type { Logger } from '../registry/core.js'
import type { WriteAdmission } from '../registry/admission.js'
import { buildAuthorizer, type AuthorizationMode } from './authorizer.js'
import type { Authorizer, RuleResolver } from './types.js'
import { createRbacAuthorization, type RbacAuthorization } from './rbac/rbac-authorization.js'
import { createEscalationCheck } from './rbac/escalation.js'
import { createNodeAuthorization } from './node/node-authorizer.js'
import { createNodeRestriction } from './node/node-restriction.js'

export interface RunningAuthorization {
  /** The --authorization-mode chain behind system:masters: give it to createApiServer({ authorization }). */
  authorizer: Authorizer
  ruleResolver: RuleResolver
  rbac: RbacAuthorization
  /** The Node authorizer, when the Node mode is on. */
  node?: Authorizer
  /** `poststarthook/rbac/bootstrap-roles`: fails until the bootstrap policy has been reconciled. */
  healthCheck: { name: string, check(): void }
  /**
   * Reconciles the bootstrap policy (the post-start hook); call after registry.start(). Retried every second for up
   * to `timeoutMs` (default 30 s, as kube-apiserver's hook polls), then the last error is thrown.
   */
  reconcile(timeoutMs?: number): Promise<void>
  stop(): void
}

export interface AuthorizationStack {
  /** Give to createRegistry({ admission }): escalation prevention, and NodeRestriction when the Node mode is on. */
  admission: WriteAdmission[]
  /** Once the registry exists: starts the watches and builds the chain. */
  start(registry: Registry, logger: Logger, opts?: { systemNamespace?: string }): RunningAuthorization
}

/** `nodeRestriction: false` leaves NodeRestriction out even with the Node mode (--disable-admission-plugins). */
export function createAuthorizationStack (modes: AuthorizationMode[], opts: { nodeRestriction?: boolean } = {}): AuthorizationStack {
  let rbac: RbacAuthorization | undefined
  let chain: Authorizer | undefined
  const admission: WriteAdmission[] = [createEscalationCheck(() => rbac === undefined || chain === undefined ? undefined : rbac.escalationDeps(chain))]
  if (modes.includes('Node') && opts.nodeRestriction !== false) admission.push(createNodeRestriction())
  return {
    admission,
    start (registry, logger, opts = {}) {
      const r = createRbacAuthorization({ registry, logger, systemNamespace: opts.systemNamespace })
      rbac = r
      const n = modes.includes('Node') ? createNodeAuthorization({ registry, logger }) : undefined
      const authorizer = buildAuthorizer(modes, { rbac: () => r.authorizer, node: n === undefined ? undefined : () => n.authorizer })
      chain = authorizer
      let reconciled = false
      return {
        authorizer,
        ruleResolver: r.ruleResolver,
        rbac: r,
        node: n?.authorizer,
        healthCheck: { name: 'poststarthook/rbac/bootstrap-roles', check: () => { if (!reconciled) throw new Error('not finished') } },
        async reconcile (timeoutMs = 30_000) {
          const deadline = Date.now() + timeoutMs
          for (;;) {
            try { await r.reconcile(); reconciled = true; return } catch (err) {
              if (Date.now() >= deadline) throw err
              logger.warn({ err }, 'bootstrap RBAC policy not reconciled yet; retrying')
              await new Promise(resolve => setTimeout(resolve, 1000))
            }
          }
        },
        stop () { r.stop(); n?.stop() }
      }
    }
  }
}
