// RBAC escalation prevention on writes of roles and bindings: grant only what you hold, unless allowed to `escalate` or `bind`.

import { forbidden } from '../../errors/status-error.js'
import type { WriteAdmission, WriteAttributes } from '../../registry/admission.js'
import type { Obj } from '../../registry/object-meta.js'
import { SYSTEM_MASTERS, resourceAttributes, type Authorizer, type RuleResolver, type UserInfo } from '../types.js'
import type { RoleRef } from './policy-index.js'
import { compactRules, compactString, goQuotedList, uncoveredRules, type PolicyRule } from './rules.js'

const RBAC_STORAGE_GROUP = 'rbac.authorization.orch.io'
const RBAC_GROUP = 'rbac.authorization.k8s.io'
const FULL_AUTHORITY: PolicyRule[] = [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }, { verbs: ['*'], nonResourceURLs: ['*'] }]

export interface EscalationDeps {
  /** Asks whether the user may `escalate` or `bind` (the server's whole authorizer chain in Kubernetes). */
  authorizer: Authorizer
  ruleResolver: RuleResolver
  /** The rules a role reference grants in a namespace (read from storage, not the index), or why they cannot be found. */
  roleRules(ref: RoleRef, namespace: string): Promise<PolicyRule[] | string>
}

/** The rules a user holds in `namespace`, and the errors met resolving them. */
async function heldRules (deps: EscalationDeps, user: UserInfo, namespace: string): Promise<{ rules: PolicyRule[], errors?: string }> {
  const r = await deps.ruleResolver.rulesFor(user, namespace)
  const rules: PolicyRule[] = [
    ...r.resourceRules.map(x => ({ verbs: x.verbs, apiGroups: x.apiGroups, resources: x.resources, resourceNames: x.resourceNames })),
    ...r.nonResourceRules.map(x => ({ verbs: x.verbs, nonResourceURLs: x.nonResourceURLs }))
  ]
  return { rules, errors: r.evaluationError }
}

/** ConfirmNoEscalation: the refusal message when `requested` is not all held, else undefined. */
export async function escalationMessage (deps: EscalationDeps, user: UserInfo, namespace: string, requested: PolicyRule[]): Promise<string | undefined> {
  const held = await heldRules(deps, user, namespace)
  const missing = uncoveredRules(held.rules, requested)
  if (missing.length === 0) return undefined
  const lines = [...new Set(compactRules(missing).map(compactString))].sort()
  let msg = `user ${JSON.stringify(user.username)} (groups=${goQuotedList(user.groups)}) is attempting to grant RBAC permissions not currently held:\n${lines.join('\n')}`
  if (held.errors !== undefined) msg += `; resolution errors: [${held.errors}]`
  return msg
}

const isRbacKind = (a: WriteAttributes): boolean => (a.definition.storageGroup ?? a.definition.group) === RBAC_STORAGE_GROUP

/** Whether only fields the garbage collector touches changed, as IsOnlyMutatingGCFields (permissions untouched). */
function onlyGcFields (a: WriteAttributes, fields: string[]): boolean {
  if (a.oldObject === undefined) return false
  const pick = (o: Obj): string => JSON.stringify(fields.map(f => f === 'labels' ? (o.metadata as Obj | undefined)?.labels ?? {} : o[f] ?? null))
  return pick(a.object) === pick(a.oldObject)
}

async function allowedTo (deps: EscalationDeps, user: UserInfo, verb: string, resource: string, namespace: string, name: string): Promise<boolean> {
  const r = await deps.authorizer.authorize(resourceAttributes(user, { verb, apiGroup: RBAC_GROUP, resource, namespace, name }))
  return r.decision === 'allow'
}

async function admitRole (deps: EscalationDeps, a: WriteAttributes): Promise<void> {
  const user = a.ctx.user
  const clusterRole = a.definition.kind === 'ClusterRole'
  if (onlyGcFields(a, clusterRole ? ['rules', 'aggregationRule', 'labels'] : ['rules'])) return
  if (await allowedTo(deps, user, 'escalate', a.definition.plural, a.namespace, a.name)) return
  const qr = { group: a.definition.group, resource: a.definition.plural }
  if (clusterRole && a.object.aggregationRule !== undefined && a.object.aggregationRule !== null &&
    (await escalationMessage(deps, user, '', FULL_AUTHORITY)) !== undefined) {
    throw forbidden(qr, a.name, 'must have cluster-admin privileges to use the aggregationRule')
  }
  const msg = await escalationMessage(deps, user, a.namespace, (a.object.rules ?? []) as PolicyRule[])
  if (msg !== undefined) throw forbidden(qr, a.name, msg)
}

async function admitBinding (deps: EscalationDeps, a: WriteAttributes): Promise<void> {
  const user = a.ctx.user
  if (onlyGcFields(a, ['roleRef', 'subjects'])) return
  const ref = a.object.roleRef as RoleRef
  const roleResource = ref.kind === 'Role' ? 'roles' : 'clusterroles'
  if (await allowedTo(deps, user, 'bind', roleResource, a.namespace, ref.name)) return
  const qr = { group: a.definition.group, resource: a.definition.plural }
  const rules = await deps.roleRules(ref, a.namespace)
  if (typeof rules === 'string') throw forbidden(qr, a.name, rules)
  const msg = await escalationMessage(deps, user, a.namespace, rules)
  if (msg !== undefined) throw forbidden(qr, a.name, msg)
}

/**
 * The escalation check for the registry's `admission` list. `deps` is asked at each write, so the check can be
 * made before the RBAC authorizer that watches the same registry; until it answers, only system:masters may write.
 */
export function createEscalationCheck (deps: () => EscalationDeps | undefined): WriteAdmission {
  return {
    async admit (a) {
      if (a.operation === 'DELETE' || a.subresource !== '' || !isRbacKind(a)) return
      if (a.ctx.user.groups.includes(SYSTEM_MASTERS)) return
      const d = deps()
      if (d === undefined) throw forbidden({ group: a.definition.group, resource: a.definition.plural }, a.name, 'RBAC is not ready yet')
      if (a.definition.kind === 'Role' || a.definition.kind === 'ClusterRole') await admitRole(d, a)
      else await admitBinding(d, a)
    }
  }
}
