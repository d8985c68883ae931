// The in-memory RBAC policy: roles by name, bindings by subject, so a decision reads only the bindings naming the user.

import type { UserInfo } from '../types.js'
import type { PolicyRule } from './rules.js'

export interface RoleRef { apiGroup?: string, kind: string, name: string }
export interface Subject { kind: string, apiGroup?: string, name: string, namespace?: string }
export type BindingKind = 'ClusterRoleBinding' | 'RoleBinding'

export interface Binding {
  kind: BindingKind
  /** '' for ClusterRoleBindings. */
  namespace: string
  name: string
  roleRef: RoleRef
  subjects: Subject[]
}

/**
 * Called for each rule reachable by the user, cluster-wide bindings first; `source` describes the binding and subject
 * as Kubernetes' reasons do, `err` is a binding whose role is missing. Return false to stop.
 */
export type RuleVisitor = (source: string, rule: PolicyRule | undefined, err: string | undefined) => boolean

const SA_PREFIX = 'system:serviceaccount:'

/** The username a service-account subject stands for (a RoleBinding's own namespace when the subject names none). */
export function serviceAccountUsername (namespace: string, name: string): string {
  return `${SA_PREFIX}${namespace}:${name}`
}

function subjectKey (s: Subject, bindingNamespace: string): string | undefined {
  switch (s.kind) {
    case 'User': return `u:${s.name}`
    case 'Group': return `g:${s.name}`
    case 'ServiceAccount': {
      const ns = s.namespace !== undefined && s.namespace !== '' ? s.namespace : bindingNamespace
      return ns === '' ? undefined : `u:${serviceAccountUsername(ns, s.name)}`
    }
    default: return undefined
  }
}

/** describeSubject: service accounts as `name/namespace`. */
function describeSubject (s: Subject, bindingNamespace: string): string {
  if (s.kind !== 'ServiceAccount') return `${s.kind} ${JSON.stringify(s.name)}`
  const ns = s.namespace !== undefined && s.namespace !== '' ? s.namespace : bindingNamespace
  return `${s.kind} ${JSON.stringify(`${s.name}/${ns}`)}`
}

export function describeBinding (b: Binding, s: Subject): string {
  const name = b.kind === 'RoleBinding' ? `${b.name}/${b.namespace}` : b.name
  return `${b.kind} ${JSON.stringify(name)} of ${b.roleRef.kind} ${JSON.stringify(b.roleRef.name)} to ${describeSubject(s, b.namespace)}`
}

const bindingKey = (kind: BindingKind, namespace: string, name: string): string => `${kind}/${namespace}/${name}`

export class PolicyIndex {
  private readonly clusterRoles = new Map<string, PolicyRule[]>()
  private readonly roles = new Map<string, PolicyRule[]>()
  private readonly bindings = new Map<string, Binding>()
  /** Subject key (`u:name`, `g:name`) -> binding key -> the subjects of that binding it stands for. */
  private readonly bySubject = new Map<string, Map<string, Subject[]>>()

  setClusterRole (name: string, rules: PolicyRule[]): void { this.clusterRoles.set(name, rules) }
  deleteClusterRole (name: string): void { this.clusterRoles.delete(name) }
  setRole (namespace: string, name: string, rules: PolicyRule[]): void { this.roles.set(`${namespace}/${name}`, rules) }
  deleteRole (namespace: string, name: string): void { this.roles.delete(`${namespace}/${name}`) }

  setBinding (b: Binding): void {
    this.deleteBinding(b.kind, b.namespace, b.name)
    const key = bindingKey(b.kind, b.namespace, b.name)
    this.bindings.set(key, b)
    for (const s of b.subjects) {
      const sk = subjectKey(s, b.namespace)
      if (sk === undefined) continue
      let m = this.bySubject.get(sk)
      if (m === undefined) this.bySubject.set(sk, m = new Map())
      const list = m.get(key)
      if (list === undefined) m.set(key, [s])
      else list.push(s)
    }
  }

  deleteBinding (kind: BindingKind, namespace: string, name: string): void {
    const key = bindingKey(kind, namespace, name)
    const b = this.bindings.get(key)
    if (b === undefined) return
    this.bindings.delete(key)
    for (const s of b.subjects) {
      const sk = subjectKey(s, b.namespace)
      const m = sk === undefined ? undefined : this.bySubject.get(sk)
      if (m === undefined) continue
      m.delete(key)
      if (m.size === 0) this.bySubject.delete(sk!)
    }
  }

  /** The rules a role reference grants within `namespace`, or Kubernetes' not-found message. */
  roleRules (ref: RoleRef, namespace: string): PolicyRule[] | string {
    if (ref.kind === 'ClusterRole') return this.clusterRoles.get(ref.name) ?? `clusterrole.rbac.authorization.k8s.io ${JSON.stringify(ref.name)} not found`
    if (ref.kind === 'Role') return this.roles.get(`${namespace}/${ref.name}`) ?? `role.rbac.authorization.k8s.io ${JSON.stringify(ref.name)} not found`
    return `unsupported role reference kind: ${JSON.stringify(ref.kind)}`
  }

  /** The bindings naming the user (by name, a group, or as a service account), with the matching subject; sorted. */
  private bindingsFor (user: UserInfo): Array<{ binding: Binding, subject: Subject }> {
    const found = new Map<string, Subject>()
    for (const sk of [`u:${user.username}`, ...user.groups.map(g => `g:${g}`)]) {
      for (const [key, subjects] of this.bySubject.get(sk) ?? []) if (!found.has(key)) found.set(key, subjects[0]!)
    }
    return [...found.keys()].sort().map(k => ({ binding: this.bindings.get(k)!, subject: found.get(k)! }))
  }

  /** VisitRulesFor: cluster role bindings, then role bindings of `namespace` ('' = cluster scope only). */
  visitRulesFor (user: UserInfo, namespace: string, visit: RuleVisitor): void {
    const all = this.bindingsFor(user)
    const ordered = [...all.filter(e => e.binding.kind === 'ClusterRoleBinding'),
      ...(namespace === '' ? [] : all.filter(e => e.binding.kind === 'RoleBinding' && e.binding.namespace === namespace))]
    for (const { binding, subject } of ordered) {
      const rules = this.roleRules(binding.roleRef, binding.namespace)
      const source = describeBinding(binding, subject)
      if (typeof rules === 'string') { if (!visit(source, undefined, rules)) return; continue }
      for (const r of rules) if (!visit(source, r, undefined)) return
    }
  }

  /** Counts, for tests and metrics. */
  size (): { clusterRoles: number, roles: number, bindings: number, subjects: number } {
    return { clusterRoles: this.clusterRoles.size, roles: this.roles.size, bindings: this.bindings.size, subjects: this.bySubject.size }
  }
}
