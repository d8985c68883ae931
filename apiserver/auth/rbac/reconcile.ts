// Bootstrap policy reconciliation (the rbac/bootstrap-roles post-start hook): create what is missing, add what was taken away.
// Objects annotated `rbac.authorization.kubernetes.io/autoupdate: "false"` are left as their owner made them.

import type { Logger } from '../../registry/core.js'
import type { ApiClient, Obj, Resource, ResourceClient } from '../../controllers/client/types.js'
import { bootstrapClusterRoleBindings, bootstrapClusterRoles } from './bootstrap-policy.js'
import { AUTOUPDATE_ANNOTATION, BOOTSTRAPPING_LABEL, type BootstrapClusterRole, type BootstrapClusterRoleBinding } from './policy-data.js'
import { uncoveredRules, type PolicyRule } from './rules.js'

export interface ReconcileOptions {
  client: ApiClient
  resources: { clusterRoles: Resource, clusterRoleBindings: Resource }
  logger: Logger
  systemNamespace: string
}

const DEFAULT_LABELS = { [BOOTSTRAPPING_LABEL]: 'rbac-defaults' }
const DEFAULT_ANNOTATIONS = { [AUTOUPDATE_ANNOTATION]: 'true' }

function metadataFor (name: string, labels: Record<string, string> = {}): Obj {
  return { name, labels: { ...DEFAULT_LABELS, ...labels }, annotations: { ...DEFAULT_ANNOTATIONS } }
}

/** Adds the expected labels and annotations the object lacks; true when something was added. */
function completeMetadata (obj: Obj, expected: Obj): boolean {
  let changed = false
  for (const field of ['labels', 'annotations'] as const) {
    const have = (obj.metadata[field] ??= {}) as Record<string, string>
    for (const [k, v] of Object.entries(expected[field] as Record<string, string>)) {
      if (have[k] === undefined) { have[k] = v; changed = true }
    }
  }
  return changed
}

const autoupdate = (obj: Obj): boolean => obj.metadata?.annotations?.[AUTOUPDATE_ANNOTATION] !== 'false'

function roleObject (r: BootstrapClusterRole): Obj {
  const obj: Obj = { metadata: metadataFor(r.name, r.labels), rules: r.rules }
  if (r.aggregateFrom !== undefined) obj.aggregationRule = { clusterRoleSelectors: r.aggregateFrom.map(matchLabels => ({ matchLabels })) }
  return obj
}

/** The role as reconciled: missing rules appended (aggregated roles: missing selectors; aggregation fills rules). */
function reconcileRole (current: Obj, r: BootstrapClusterRole): boolean {
  const expected = roleObject(r)
  let changed = completeMetadata(current, expected.metadata)
  if (r.aggregateFrom !== undefined) {
    const selectors: Obj[] = current.aggregationRule?.clusterRoleSelectors ?? []
    const missing = (expected.aggregationRule.clusterRoleSelectors as Obj[]).filter(s => !selectors.some(h => JSON.stringify(h) === JSON.stringify(s)))
    if (missing.length > 0) { current.aggregationRule = { clusterRoleSelectors: [...selectors, ...missing] }; changed = true }
    return changed
  }
  const have = (current.rules ?? []) as PolicyRule[]
  const missing = r.rules.filter(rule => uncoveredRules(have, [rule]).length > 0)
  if (missing.length > 0) { current.rules = [...have, ...missing]; changed = true }
  return changed
}

function bindingObject (b: BootstrapClusterRoleBinding): Obj {
  return { metadata: metadataFor(b.name), roleRef: b.roleRef, subjects: b.subjects }
}

const sameSubject = (a: Obj, b: Obj): boolean =>
  a.kind === b.kind && a.name === b.name && (a.namespace ?? '') === (b.namespace ?? '')

async function ensure (client: ResourceClient, name: string, create: () => Obj, update: (current: Obj) => boolean | 'recreate'): Promise<void> {
  const current = await client.get('', name)
  if (current === undefined) { await client.create('', create()); return }
  if (!autoupdate(current)) return
  const copy = structuredClone(current)
  const verdict = update(copy)
  if (verdict === 'recreate') {
    await client.delete('', name, { preconditions: { uid: current.metadata.uid } })
    await client.create('', create())
  } else if (verdict) {
    await client.update('', copy)
  }
}

/** Reconciles every bootstrap ClusterRole, then every ClusterRoleBinding. Throws the first failure after trying all. */
export async function reconcileBootstrapPolicy (o: ReconcileOptions): Promise<void> {
  const roles = o.client.resource(o.resources.clusterRoles)
  const bindings = o.client.resource(o.resources.clusterRoleBindings)
  const failures: unknown[] = []
  for (const r of bootstrapClusterRoles()) {
    try {
      await ensure(roles, r.name, () => roleObject(r), cur => reconcileRole(cur, r))
    } catch (err) { failures.push(err); o.logger.warn({ err, clusterRole: r.name }, 'could not reconcile bootstrap clusterrole') }
  }
  for (const b of bootstrapClusterRoleBindings(o.systemNamespace)) {
    try {
      await ensure(bindings, b.name, () => bindingObject(b), cur => {
        // roleRef cannot change: a binding to another role is replaced.
        if (cur.roleRef?.kind !== b.roleRef.kind || cur.roleRef?.name !== b.roleRef.name) return 'recreate'
        let changed = completeMetadata(cur, bindingObject(b).metadata)
        const have: Obj[] = cur.subjects ?? []
        const missing = b.subjects.filter(s => !have.some(h => sameSubject(h, s)))
        if (missing.length > 0) { cur.subjects = [...have, ...missing]; changed = true }
        return changed
      })
    } catch (err) { failures.push(err); o.logger.warn({ err, clusterRoleBinding: b.name }, 'could not reconcile bootstrap clusterrolebinding') }
  }
  if (failures.length > 0) throw failures[0] as Error
}
