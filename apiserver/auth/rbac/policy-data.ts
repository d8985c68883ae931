// Compact notation for the bootstrap policy data: rules, roles and bindings as Kubernetes writes them out.

import type { PolicyRule } from './rules.js'
import type { RoleRef, Subject } from './policy-index.js'

export const AUTOUPDATE_ANNOTATION = 'rbac.authorization.kubernetes.io/autoupdate'
export const BOOTSTRAPPING_LABEL = 'kubernetes.io/bootstrapping'
export const RBAC_API_GROUP = 'rbac.authorization.k8s.io'

export interface BootstrapClusterRole {
  name: string
  rules: PolicyRule[]
  labels?: Record<string, string>
  /** Label selectors (matchLabels) of an aggregated role; its rules are filled by aggregation. */
  aggregateFrom?: Array<Record<string, string>>
}

export interface BootstrapClusterRoleBinding { name: string, roleRef: RoleRef, subjects: Subject[] }

const list = (csv: string): string[] => csv.split(',').map(s => s.trim())

/** A resource rule: `verbs`, `groups` and `resources` comma-separated ('' is the core group). */
export function rule (verbs: string, groups: string, resources: string, resourceNames?: string): PolicyRule {
  const r: PolicyRule = { verbs: list(verbs), apiGroups: list(groups), resources: list(resources) }
  if (resourceNames !== undefined) r.resourceNames = list(resourceNames)
  return r
}

/** A non-resource rule. */
export function urls (verbs: string, paths: string): PolicyRule {
  return { verbs: list(verbs), nonResourceURLs: list(paths) }
}

export const READ = 'get,list,watch'
export const READ_WRITE = 'create,delete,deletecollection,get,list,patch,update,watch'
export const WRITE = 'create,delete,deletecollection,patch,update'
/** The events rule every controller role carries (eventsRule). */
export const EVENTS = rule('create,patch,update', ',events.k8s.io', 'events')

export const user = (name: string): Subject => ({ kind: 'User', apiGroup: RBAC_API_GROUP, name })
export const group = (name: string): Subject => ({ kind: 'Group', apiGroup: RBAC_API_GROUP, name })
export const serviceAccount = (namespace: string, name: string): Subject => ({ kind: 'ServiceAccount', name, namespace })

/** A ClusterRoleBinding named after its ClusterRole, as most bootstrap bindings are. */
export function bindingOf (role: string, ...subjects: Subject[]): BootstrapClusterRoleBinding {
  return { name: role, roleRef: { apiGroup: RBAC_API_GROUP, kind: 'ClusterRole', name: role }, subjects }
}
