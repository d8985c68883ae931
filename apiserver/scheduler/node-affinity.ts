// Node selection terms: nodeSelector, required and preferred node affinity, as Kubernetes evaluates them.

import type { Obj } from '../controllers/client/types.js'

interface Requirement { key: string, operator: string, values?: string[] }

function requirementMatches (r: Requirement, value: string | undefined): boolean {
  const values = r.values ?? []
  switch (r.operator) {
    case 'In': return value !== undefined && values.includes(value)
    case 'NotIn': return value === undefined || !values.includes(value)
    case 'Exists': return value !== undefined
    case 'DoesNotExist': return value === undefined
    case 'Gt': return value !== undefined && /^-?\d+$/.test(value) && Number(value) > Number(values[0])
    case 'Lt': return value !== undefined && /^-?\d+$/.test(value) && Number(value) < Number(values[0])
    default: return false
  }
}

/** One NodeSelectorTerm: all its expressions and fields hold; an empty term matches nothing. */
export function termMatches (term: Obj, node: Obj): boolean {
  const exprs = (term.matchExpressions ?? []) as Requirement[]
  const fields = (term.matchFields ?? []) as Requirement[]
  if (exprs.length === 0 && fields.length === 0) return false
  const labels = (node.metadata?.labels ?? {}) as Record<string, string>
  if (!exprs.every(r => requirementMatches(r, labels[r.key]))) return false
  return fields.every(r => r.key === 'metadata.name' && requirementMatches(r, String(node.metadata?.name)))
}

/** nodeSelector and requiredDuringSchedulingIgnoredDuringExecution (terms are ORed). */
export function nodeMatchesPod (pod: Obj, node: Obj): boolean {
  const labels = (node.metadata?.labels ?? {}) as Record<string, string>
  for (const [k, v] of Object.entries((pod.spec?.nodeSelector ?? {}) as Record<string, string>)) if (labels[k] !== v) return false
  const required = pod.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution
  if (required === undefined || required === null) return true
  const terms = (required.nodeSelectorTerms ?? []) as Obj[]
  return terms.some(t => termMatches(t, node))
}

/** Sum of the weights of the preferred terms the node satisfies. */
export function preferredAffinityScore (pod: Obj, node: Obj): number {
  let score = 0
  for (const p of (pod.spec?.affinity?.nodeAffinity?.preferredDuringSchedulingIgnoredDuringExecution ?? []) as Obj[]) {
    if (p.preference !== undefined && termMatches(p.preference, node)) score += Number(p.weight ?? 0)
  }
  return score
}

/** Whether `tolerations` tolerate `taint` (empty key with Exists tolerates everything). */
export function tolerates (tolerations: Obj[], taint: Obj): boolean {
  return tolerations.some(t => {
    if (t.effect !== undefined && t.effect !== '' && t.effect !== taint.effect) return false
    if ((t.key ?? '') === '') return t.operator === 'Exists'
    if (t.key !== taint.key) return false
    return t.operator === 'Exists' || (t.value ?? '') === (taint.value ?? '')
  })
}
