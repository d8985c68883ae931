// The selector index: the terms the store indexes objects by (labels, some field paths) and the terms a selector needs.
//
// Terms: `l:<key>=<value>` for every label, `f:<path>=<value>` for every indexed field path of the object's resource
// (the value as the field selector sees it, '' when absent). The store keeps them exact at every revision; a LIST
// that needs one of a selector's terms reads those keys only and still checks the whole selector on each.

import type { StoreIndexer } from '../storage/store.js'
import { fieldPathValue, type Selector } from './selectors.js'

/** Field paths indexed beyond metadata.name, per storage prefix: the field selectors the system's own clients send. */
const INDEXED_FIELDS: ReadonlyArray<readonly [prefix: string, paths: readonly string[]]> = [
  ['/core/pods/', ['spec.nodeName']],
  ['/core/events/', ['involvedObject.kind', 'involvedObject.namespace', 'involvedObject.name', 'involvedObject.uid',
    'involvedObject.apiVersion', 'involvedObject.resourceVersion', 'involvedObject.fieldPath']]
]
const EVERY_KIND = ['metadata.name']

function indexedPaths (key: string): readonly string[] {
  for (const [prefix, paths] of INDEXED_FIELDS) if (key.startsWith(prefix)) return [...EVERY_KIND, ...paths]
  return EVERY_KIND
}

const labelTerm = (key: string, value: string): string => `l:${key}=${value}`
const fieldTerm = (path: string, value: string): string => `f:${path}=${value}`

/**
 * The indexer the API server opens its store with. Objects the registry stores are JSON; anything else has no terms.
 * The registry's writes hand over the object they serialized (Encoder.source), which spares parsing the bytes.
 */
export const selectorIndexer: StoreIndexer = {
  version: 'selector-1',
  terms (key, value, source) {
    let obj: Record<string, unknown>
    try {
      obj = (source !== null && typeof source === 'object' ? source : JSON.parse(value.toString('utf8'))) as Record<string, unknown>
    } catch {
      return []
    }
    if (obj === null || typeof obj !== 'object') return []
    const terms: string[] = []
    const labels = (obj.metadata as { labels?: unknown } | undefined)?.labels
    if (labels !== null && typeof labels === 'object') {
      for (const [k, v] of Object.entries(labels)) if (typeof v === 'string') terms.push(labelTerm(k, v))
    }
    for (const path of indexedPaths(key)) terms.push(fieldTerm(path, fieldPathValue(obj, path)))
    return terms
  }
}

/**
 * Terms of which every object `selector` matches under `resourcePrefix` has one (ListOptions.index), or undefined
 * when no requirement is indexed: the first label equality (`k=v`, `k in (a,b)`), else the first indexed field
 * equality. Only fields read as `fieldPathValue` reads them are indexed, so the terms agree with the selector.
 */
export function selectorIndexTerms (resourcePrefix: string, selector: Selector): string[] | undefined {
  const label = selector.labelRequirements.find(r => r.op === 'in')
  if (label !== undefined) return label.values.map(v => labelTerm(label.key, v))
  const paths = indexedPaths(resourcePrefix)
  const field = selector.fieldRequirements.find(r => r.op === '=' && paths.includes(r.field))
  return field === undefined ? undefined : [fieldTerm(field.field, field.value)]
}
