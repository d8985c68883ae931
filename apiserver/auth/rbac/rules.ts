// PolicyRule semantics: whether a rule allows a request (RuleAllows), whether rules cover others (escalation), their compact text.

import { upstreamGroup } from '../../schema/builtin/upstream-groups.js'
import type { Attributes } from '../types.js'

export interface PolicyRule {
  verbs: string[]
  apiGroups?: string[]
  resources?: string[]
  resourceNames?: string[]
  nonResourceURLs?: string[]
}

const ALL = '*'

/** `coordination.orch.io` and `coordination.k8s.io` are one group served twice: rules name either. */
const sameGroup = (g: string): string => upstreamGroup(g) ?? g

export function verbMatches (rule: PolicyRule, verb: string): boolean {
  return rule.verbs.some(v => v === ALL || v === verb)
}

export function apiGroupMatches (rule: PolicyRule, group: string): boolean {
  const wanted = sameGroup(group)
  return (rule.apiGroups ?? []).some(g => g === ALL || sameGroup(g) === wanted)
}

/** `combined` is `resource/subresource`; `*` and `*\/subresource` match too. */
export function resourceMatches (rule: PolicyRule, combined: string, subresource: string): boolean {
  for (const r of rule.resources ?? []) {
    if (r === ALL || r === combined) return true
    if (subresource !== '' && r.length === subresource.length + 2 && r.startsWith('*/') && r.endsWith(subresource)) return true
  }
  return false
}

export function resourceNameMatches (rule: PolicyRule, name: string): boolean {
  const names = rule.resourceNames ?? []
  return names.length === 0 || names.includes(name)
}

/** `*` matches every path; a trailing `*` matches by prefix. */
export function nonResourceURLMatches (rule: PolicyRule, path: string): boolean {
  return (rule.nonResourceURLs ?? []).some(u => u === ALL || u === path || (u.endsWith('*') && path.startsWith(u.replace(/\*+$/, ''))))
}

/** Kubernetes' RuleAllows. */
export function ruleAllows (a: Attributes, rule: PolicyRule): boolean {
  if (!verbMatches(rule, a.verb)) return false
  if (!a.resourceRequest) return nonResourceURLMatches(rule, a.path)
  const combined = a.subresource === '' ? a.resource : `${a.resource}/${a.subresource}`
  return apiGroupMatches(rule, a.apiGroup) && resourceMatches(rule, combined, a.subresource) && resourceNameMatches(rule, a.name)
}

/** BreakdownRule: one rule per group x resource x verb (names kept), or per URL x verb. */
export function breakdownRule (rule: PolicyRule): PolicyRule[] {
  const out: PolicyRule[] = []
  for (const g of rule.apiGroups ?? []) {
    for (const r of rule.resources ?? []) {
      for (const v of rule.verbs) out.push({ apiGroups: [g], resources: [r], verbs: [v], resourceNames: [...(rule.resourceNames ?? [])] })
    }
  }
  for (const u of rule.nonResourceURLs ?? []) for (const v of rule.verbs) out.push({ nonResourceURLs: [u], verbs: [v] })
  return out
}

const hasAll = (set: string[], wanted: string[]): boolean => wanted.every(w => set.includes(w))

function resourceCovers (owner: string[], requested: string): boolean {
  return owner.some(o => {
    if (o === requested) return true
    const slash = requested.indexOf('/')
    return o.startsWith('*/') && slash >= 0 && o.slice(2) === requested.slice(slash + 1)
  })
}

function urlCovers (owner: string[], requested: string): boolean {
  return owner.some(o => o === requested || (o.endsWith('*') && requested.startsWith(o.replace(/\*+$/, ''))))
}

/** ruleCovers: `owner` grants everything `sub` (a broken-down rule) does. */
export function ruleCovers (owner: PolicyRule, sub: PolicyRule): boolean {
  const ownerGroups = (owner.apiGroups ?? []).map(sameGroup)
  const verbs = owner.verbs.includes(ALL) || hasAll(owner.verbs, sub.verbs)
  const groups = ownerGroups.includes(ALL) || hasAll(ownerGroups, (sub.apiGroups ?? []).map(sameGroup))
  const ownerResources = owner.resources ?? []
  const resources = ownerResources.includes(ALL) || (sub.resources ?? []).every(r => resourceCovers(ownerResources, r))
  const urls = (sub.nonResourceURLs ?? []).every(u => urlCovers(owner.nonResourceURLs ?? [], u))
  const ownerNames = owner.resourceNames ?? []
  const subNames = sub.resourceNames ?? []
  const names = subNames.length === 0 ? ownerNames.length === 0 : ownerNames.length === 0 || hasAll(ownerNames, subNames)
  return verbs && groups && resources && names && urls
}

/** Covers: the broken-down rules of `requested` that no rule of `owner` covers (empty: all covered). */
export function uncoveredRules (owner: PolicyRule[], requested: PolicyRule[]): PolicyRule[] {
  const missing: PolicyRule[] = []
  for (const r of requested) {
    for (const sub of breakdownRule(r)) if (!owner.some(o => ruleCovers(o, sub))) missing.push(sub)
  }
  return missing
}

/** Go's %q of a []string: `["a" "b"]`. */
export function goQuotedList (values: string[]): string {
  return `[${values.map(v => JSON.stringify(v)).join(' ')}]`
}

/** CompactString: `{APIGroups:["apps"], Resources:["deployments"], Verbs:["get" "list"]}`. */
export function compactString (r: PolicyRule): string {
  const parts: string[] = []
  if ((r.apiGroups ?? []).length > 0) parts.push(`APIGroups:${goQuotedList(r.apiGroups!)}`)
  if ((r.resources ?? []).length > 0) parts.push(`Resources:${goQuotedList(r.resources!)}`)
  if ((r.nonResourceURLs ?? []).length > 0) parts.push(`NonResourceURLs:${goQuotedList(r.nonResourceURLs!)}`)
  if ((r.resourceNames ?? []).length > 0) parts.push(`ResourceNames:${goQuotedList(r.resourceNames!)}`)
  if (r.verbs.length > 0) parts.push(`Verbs:${goQuotedList(r.verbs)}`)
  return `{${parts.join(', ')}}`
}

/** CompactRules: single group/resource rules (with at most one name) that differ only in verbs become one. */
export function compactRules (rules: PolicyRule[]): PolicyRule[] {
  const out: PolicyRule[] = []
  const simple = new Map<string, PolicyRule>()
  for (const r of rules) {
    const names = r.resourceNames ?? []
    const isSimple = (r.apiGroups ?? []).length === 1 && (r.resources ?? []).length === 1 && names.length <= 1 && (r.nonResourceURLs ?? []).length === 0
    if (!isSimple) { out.push(r); continue }
    const key = JSON.stringify([r.apiGroups![0], r.resources![0], names])
    const seen = simple.get(key)
    if (seen === undefined) {
      const copy: PolicyRule = { apiGroups: [...r.apiGroups!], resources: [...r.resources!], verbs: [...r.verbs] }
      if (names.length > 0) copy.resourceNames = [...names]
      simple.set(key, copy)
      out.push(copy)
    } else {
      seen.verbs.push(...r.verbs)
    }
  }
  return out
}
