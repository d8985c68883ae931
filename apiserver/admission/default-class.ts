// Picking the cluster's default class (StorageClass, IngressClass) among those annotated as default, as Kubernetes does.

import type { Obj } from './lookup.js'

/** True when any of `keys` annotates the object with exactly "true". */
export function annotatedDefault (obj: Obj, keys: readonly string[]): boolean {
  const annotations = (obj.metadata?.annotations ?? {}) as Record<string, unknown>
  return keys.some(k => annotations[k] === 'true')
}

const created = (o: Obj): number => {
  const t = Date.parse(String(o.metadata?.creationTimestamp ?? ''))
  return Number.isNaN(t) ? 0 : t
}

/**
 * The default among `classes`: of those annotated by one of `keys`, the newest by creationTimestamp, then the first
 * by name (kube-apiserver's order, so a second default added while migrating takes over at once). Undefined if none.
 */
export function pickDefault (classes: Obj[], keys: readonly string[]): Obj | undefined {
  const defaults = classes.filter(c => annotatedDefault(c, keys))
  defaults.sort((a, b) => {
    const byAge = created(b) - created(a)
    if (byAge !== 0) return byAge
    const an = String(a.metadata?.name ?? '')
    const bn = String(b.metadata?.name ?? '')
    return an < bn ? -1 : an > bn ? 1 : 0
  })
  return defaults[0]
}
