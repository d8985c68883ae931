// The RBAC authorizer and rule resolver over an index fed by the registry's watch, with aggregation and bootstrap reconciliation.

import type { Registry } from '../../registry/types.js'
import type { Logger } from '../../registry/core.js'
import { inProcessClient } from '../../controllers/client/in-process.js'
import { SharedInformer } from '../../controllers/informer.js'
import { systemControllerClock, type ControllerClock } from '../../controllers/clock.js'
import type { Obj, Resource } from '../../controllers/client/types.js'
import type { Authorizer, RuleResolver } from '../types.js'
import { PolicyIndex, type Binding, type BindingKind, type RoleRef } from './policy-index.js'
import type { PolicyRule } from './rules.js'
import { rbacAuthorizer, rbacRuleResolver } from './rbac-authorizer.js'
import { createAggregator } from './aggregation.js'
import { reconcileBootstrapPolicy } from './reconcile.js'
import type { EscalationDeps } from './escalation.js'
import { privilegedGroup, unionAuthorizer } from '../authorizer.js'

const GROUP = 'rbac.authorization.orch.io'
export const RBAC_RESOURCES = {
  clusterRoles: { group: GROUP, version: 'v1', resource: 'clusterroles', namespaced: false },
  roles: { group: GROUP, version: 'v1', resource: 'roles', namespaced: true },
  clusterRoleBindings: { group: GROUP, version: 'v1', resource: 'clusterrolebindings', namespaced: false },
  roleBindings: { group: GROUP, version: 'v1', resource: 'rolebindings', namespaced: true }
} as const satisfies Record<string, Resource>

export interface RbacAuthorizationOptions {
  registry: Registry
  logger: Logger
  clock?: ControllerClock
  /** Namespace of the controllers' service accounts in the bootstrap bindings (Kubernetes: kube-system). */
  systemNamespace?: string
}

export interface RbacAuthorization {
  authorizer: Authorizer
  ruleResolver: RuleResolver
  /** The rules a role reference grants in `namespace` (GetRoleReferenceRules, read from storage), or Kubernetes' not-found message. */
  roleRules(ref: RoleRef, namespace: string): Promise<PolicyRule[] | string>
  /**
   * What the escalation check (escalation.ts) needs; `authorizer` answers its escalate/bind questions and should be
   * the server's whole chain (default: system:masters, then RBAC).
   */
  escalationDeps(authorizer?: Authorizer): EscalationDeps
  /** Resolves once roles and bindings have been listed into the index. */
  ready(): Promise<void>
  /**
   * Resolves once the index has seen a role or binding event at `resourceVersion` or later: after writing one,
   * wait on the written object's resourceVersion for decisions to reflect it.
   */
  waitForResourceVersion(resourceVersion: string): Promise<void>
  /** Creates or completes the bootstrap roles and bindings (the `rbac/bootstrap-roles` post-start hook). */
  reconcile(): Promise<void>
  stop(): void
}

const rulesOf = (o: Obj): PolicyRule[] => Array.isArray(o.rules) ? o.rules as PolicyRule[] : []

function bindingOf (kind: BindingKind, o: Obj): Binding {
  return {
    kind, namespace: String(o.metadata?.namespace ?? ''), name: String(o.metadata?.name ?? ''),
    roleRef: o.roleRef ?? { kind: '', name: '' }, subjects: Array.isArray(o.subjects) ? o.subjects : []
  }
}

/** The newest resourceVersion the index has seen, and those waiting for one. */
class RevisionWaiters {
  private seen = 0
  private readonly waiters: Array<{ rv: number, resolve: () => void }> = []

  observe (rv: number): void {
    if (!(rv > this.seen)) return
    this.seen = rv
    for (let i = this.waiters.length - 1; i >= 0; i--) if (this.waiters[i]!.rv <= rv) this.waiters.splice(i, 1)[0]!.resolve()
  }

  async wait (rv: number): Promise<void> {
    if (rv <= this.seen) return
    await new Promise<void>(resolve => this.waiters.push({ rv, resolve }))
  }

  releaseAll (): void { for (const w of this.waiters.splice(0)) w.resolve() }
}

export function createRbacAuthorization (o: RbacAuthorizationOptions): RbacAuthorization {
  const clock = o.clock ?? systemControllerClock
  const client = inProcessClient(o.registry, 'rbac', 'system:apiserver')
  const index = new PolicyIndex()
  const revisions = new RevisionWaiters()
  const observe = (obj: Obj): void => { revisions.observe(Number(obj.metadata?.resourceVersion ?? 0)) }
  const informer = (r: Resource): SharedInformer => new SharedInformer(r, client, clock, o.logger)
  const clusterRoles = informer(RBAC_RESOURCES.clusterRoles)
  const roles = informer(RBAC_RESOURCES.roles)
  const crbs = informer(RBAC_RESOURCES.clusterRoleBindings)
  const rbs = informer(RBAC_RESOURCES.roleBindings)
  const aggregator = createAggregator({ clusterRoles, client: client.resource(RBAC_RESOURCES.clusterRoles), logger: o.logger })

  clusterRoles.addEventHandler({
    add: c => { index.setClusterRole(c.metadata.name, rulesOf(c)); observe(c); aggregator.changed() },
    update: (_, c) => { index.setClusterRole(c.metadata.name, rulesOf(c)); observe(c); aggregator.changed() },
    delete: c => { index.deleteClusterRole(c.metadata.name); observe(c); aggregator.changed() }
  })
  roles.addEventHandler({
    add: r => { index.setRole(r.metadata.namespace, r.metadata.name, rulesOf(r)); observe(r) },
    update: (_, r) => { index.setRole(r.metadata.namespace, r.metadata.name, rulesOf(r)); observe(r) },
    delete: r => { index.deleteRole(r.metadata.namespace, r.metadata.name); observe(r) }
  })
  for (const [inf, kind] of [[crbs, 'ClusterRoleBinding'], [rbs, 'RoleBinding']] as const) {
    inf.addEventHandler({
      add: b => { index.setBinding(bindingOf(kind, b)); observe(b) },
      update: (_, b) => { index.setBinding(bindingOf(kind, b)); observe(b) },
      delete: b => { index.deleteBinding(kind, String(b.metadata?.namespace ?? ''), b.metadata.name); observe(b) }
    })
  }
  const informers = [clusterRoles, roles, crbs, rbs]
  for (const i of informers) i.start()
  const synced = Promise.all(informers.map(async i => await i.waitForSync())).then(() => { aggregator.changed() })

  const authorizer = rbacAuthorizer(index, synced)
  const ruleResolver = rbacRuleResolver(index)

  // Read from storage: a binding made right after its role must not be refused for the index's lag.
  const roleRules = async (ref: RoleRef, namespace: string): Promise<PolicyRule[] | string> => {
    const cluster = ref.kind === 'ClusterRole'
    if (!cluster && ref.kind !== 'Role') return index.roleRules(ref, namespace)
    const role = await client.resource(cluster ? RBAC_RESOURCES.clusterRoles : RBAC_RESOURCES.roles).get(cluster ? '' : namespace, ref.name)
    if (role === undefined) return `${cluster ? 'clusterrole' : 'role'}.rbac.authorization.k8s.io ${JSON.stringify(ref.name)} not found`
    return rulesOf(role)
  }
  return {
    authorizer,
    ruleResolver,
    roleRules,
    escalationDeps: (chain = unionAuthorizer([privilegedGroup, authorizer])) => ({ authorizer: chain, ruleResolver, roleRules }),
    ready: async () => { await synced },
    waitForResourceVersion: async (resourceVersion) => { await revisions.wait(Number(resourceVersion)) },
    async reconcile () {
      await synced
      await reconcileBootstrapPolicy({ client, resources: RBAC_RESOURCES, logger: o.logger, systemNamespace: o.systemNamespace ?? 'kube-system' })
    },
    stop () {
      aggregator.stop()
      for (const i of informers) i.stop()
      revisions.releaseAll()
    }
  }
}
