// Label selectors as objects (matchLabels, matchExpressions) and as maps (Service and ReplicationController selectors).

import type { Obj } from './client/types.js'
import { labelSelectorMatches, type LabelSelectorObject } from '../registry/label-selector.js'

export type LabelSelector = LabelSelectorObject

/** Whether `labels` satisfy `selector` (see registry/label-selector.ts). */
export const selectorMatches = labelSelectorMatches

/** A map selector (`spec.selector` of a Service): every pair present; an empty map selects nothing. */
export function mapSelectorMatches (selector: Record<string, string> | undefined, labels: Record<string, string> | undefined): boolean {
  if (selector === undefined || Object.keys(selector).length === 0) return false
  const l = labels ?? {}
  return Object.entries(selector).every(([k, v]) => l[k] === v)
}

export function labelsOf (obj: Obj): Record<string, string> {
  return (obj.metadata?.labels ?? {}) as Record<string, string>
}

/** The controlling owner reference of `obj`, if any. */
export function controllerOf (obj: Obj): Obj | undefined {
  return ((obj.metadata?.ownerReferences ?? []) as Obj[]).find(r => r.controller === true)
}
