// LabelSelector objects (matchLabels, matchExpressions) matched against labels: one owner for the API server and its controllers.

export interface LabelSelectorObject {
  matchLabels?: Record<string, string>
  matchExpressions?: Array<{ key: string, operator: string, values?: string[] }>
}

/** Whether `labels` satisfy `selector`. An empty selector matches everything; a missing (null) one nothing. */
export function labelSelectorMatches (selector: LabelSelectorObject | undefined | null, labels: Record<string, string> | undefined): boolean {
  if (selector === undefined || selector === null) return false
  const l = labels ?? {}
  for (const [k, v] of Object.entries(selector.matchLabels ?? {})) if (l[k] !== v) return false
  for (const e of selector.matchExpressions ?? []) {
    const has = Object.prototype.hasOwnProperty.call(l, e.key)
    const values = e.values ?? []
    switch (e.operator) {
      case 'In': if (!has || !values.includes(l[e.key])) return false; break
      case 'NotIn': if (has && values.includes(l[e.key])) return false; break
      case 'Exists': if (!has) return false; break
      case 'DoesNotExist': if (has) return false; break
      default: return false
    }
  }
  return true
}
