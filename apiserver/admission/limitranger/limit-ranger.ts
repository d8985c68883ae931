// The LimitRanger admission plugin: fills containers' missing requests and limits from the namespace's LimitRanges,
// then enforces their min, max and maxLimitRequestRatio on containers, pods and PersistentVolumeClaims.

import { forbidden } from '../../errors/status-error.js'
import type { WriteAttributes } from '../../registry/admission.js'
import type { AdmissionDeps, AdmissionPlugin } from '../plugins.js'
import { listObjects, type Obj } from '../lookup.js'
import { amount, formatAmount } from '../quantity.js'
import { podCompute } from '../quota/usage.js'

type Quantities = Record<string, string>

const isPod = (a: WriteAttributes): boolean => a.definition.group === '' && a.definition.plural === 'pods'
const isPvc = (a: WriteAttributes): boolean => a.definition.group === '' && a.definition.plural === 'persistentvolumeclaims'
const containersOf = (pod: Obj): Obj[] => [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])] as Obj[]

async function itemsOf (deps: AdmissionDeps, namespace: string, type: string): Promise<Obj[]> {
  const ranges = await listObjects(deps.registry(), '', 'v1', 'limitranges', namespace)
  return ranges.flatMap(r => ((r.spec?.limits ?? []) as Obj[]).filter(l => l.type === type))
}

export const LIMIT_RANGER_ANNOTATION = 'kubernetes.io/limit-ranger'

/**
 * Fills what a container does not say from the items' `defaultRequest` (requests) and `default` (limits); returns
 * what it set in the words of the `kubernetes.io/limit-ranger` annotation (`cpu, memory request for container c`).
 */
function defaultContainer (c: Obj, items: Obj[], label: string): string[] {
  const fill = (kind: 'limits' | 'requests', from: 'default' | 'defaultRequest'): string[] => {
    const set: string[] = []
    for (const item of items) {
      for (const [r, v] of Object.entries((item[from] ?? {}) as Quantities)) {
        c.resources ??= {}
        c.resources[kind] ??= {}
        if (c.resources[kind][r] === undefined) { c.resources[kind][r] = v; set.push(r) }
      }
    }
    return set
  }
  const requests = fill('requests', 'defaultRequest')
  const limits = fill('limits', 'default')
  const out: string[] = []
  if (requests.length > 0) out.push(`${requests.sort().join(', ')} request for ${label} ${String(c.name)}`)
  if (limits.length > 0) out.push(`${limits.sort().join(', ')} limit for ${label} ${String(c.name)}`)
  return out
}

/** The min/max/ratio checks of one item on one set of requests and limits (`what`: Container, Pod, PersistentVolumeClaim). */
function check (item: Obj, what: string, requests: Quantities, limits: Quantities, errs: string[], maxOnRequest = false): void {
  for (const [r, min] of Object.entries((item.min ?? {}) as Quantities)) {
    const req = requests[r]
    if (req === undefined) errs.push(`minimum ${r} usage per ${what} is ${min}.  No request is specified`)
    else if (amount(r, req) < amount(r, min)) errs.push(`minimum ${r} usage per ${what} is ${min}, but request is ${req}`)
    const lim = limits[r]
    if (lim !== undefined && amount(r, lim) < amount(r, min)) errs.push(`minimum ${r} usage per ${what} is ${min}, but limit is ${lim}`)
  }
  for (const [r, max] of Object.entries((item.max ?? {}) as Quantities)) {
    const [have, word] = maxOnRequest ? [requests[r], 'request'] : [limits[r], 'limit']
    if (have === undefined) errs.push(`maximum ${r} usage per ${what} is ${max}.  No ${word} is specified`)
    else if (amount(r, have) > amount(r, max)) errs.push(`maximum ${r} usage per ${what} is ${max}, but ${word} is ${have}`)
    const req = requests[r]
    if (!maxOnRequest && req !== undefined && amount(r, req) > amount(r, max)) errs.push(`maximum ${r} usage per ${what} is ${max}, but request is ${req}`)
  }
  for (const [r, ratio] of Object.entries((item.maxLimitRequestRatio ?? {}) as Quantities)) {
    const req = requests[r]
    const lim = limits[r]
    if (lim === undefined) { errs.push(`${r} max limit to request ratio per ${what} is ${ratio}, but no limit is specified`); continue }
    if (req === undefined || amount(r, req) === 0) { errs.push(`${r} max limit to request ratio per ${what} is ${ratio}, but no request is specified or request is 0`); continue }
    const observed = amount(r, lim) / amount(r, req)
    if (observed > Number(amount('', ratio))) errs.push(`${r} max limit to request ratio per ${what} is ${ratio}, but provided ratio is ${observed.toFixed(6)}`)
  }
}

/** A pod's total requests and limits of the resources an item names (the Pod type checks the whole pod). */
function podTotals (pod: Obj, item: Obj): { requests: Quantities, limits: Quantities } {
  const names = new Set([...Object.keys(item.min ?? {}), ...Object.keys(item.max ?? {}), ...Object.keys(item.maxLimitRequestRatio ?? {})])
  const requests: Quantities = {}
  const limits: Quantities = {}
  for (const r of names) {
    const cs = containersOf(pod)
    if (cs.every(c => c.resources?.requests?.[r] !== undefined)) requests[r] = formatAmount(r, podCompute(pod, 'requests', r))
    if (cs.every(c => c.resources?.limits?.[r] !== undefined)) limits[r] = formatAmount(r, podCompute(pod, 'limits', r))
  }
  return { requests, limits }
}

export function limitRangerPlugin (deps: AdmissionDeps): AdmissionPlugin {
  return {
    mutating: {
      async admit (a) {
        if (a.operation !== 'CREATE' || a.subresource !== '' || !isPod(a)) return
        const items = await itemsOf(deps, a.namespace, 'Container')
        if (items.length === 0) return
        const spec = (a.object.spec ?? {}) as Obj
        const set = [
          ...((spec.containers ?? []) as Obj[]).flatMap(c => defaultContainer(c, items, 'container')),
          ...((spec.initContainers ?? []) as Obj[]).flatMap(c => defaultContainer(c, items, 'init container'))
        ]
        if (set.length === 0) return
        const meta = a.object.metadata as Obj
        meta.annotations = { ...meta.annotations, [LIMIT_RANGER_ANNOTATION]: `LimitRanger plugin set: ${set.join('; ')}` }
      }
    },
    validating: {
      async admit (a) {
        if (a.operation === 'DELETE' || a.subresource !== '') return
        const errs: string[] = []
        if (isPod(a)) {
          if (a.operation !== 'CREATE') return
          for (const item of await itemsOf(deps, a.namespace, 'Container')) {
            for (const c of containersOf(a.object)) check(item, 'Container', c.resources?.requests ?? {}, c.resources?.limits ?? {}, errs)
          }
          for (const item of await itemsOf(deps, a.namespace, 'Pod')) {
            const t = podTotals(a.object, item)
            check(item, 'Pod', t.requests, t.limits, errs)
          }
        } else if (isPvc(a)) {
          for (const item of await itemsOf(deps, a.namespace, 'PersistentVolumeClaim')) {
            const spec = a.object.spec as Obj | undefined
            check(item, 'PersistentVolumeClaim', spec?.resources?.requests ?? {}, spec?.resources?.limits ?? {}, errs, true)
          }
        } else return
        if (errs.length > 0) {
          throw forbidden({ group: a.definition.group, resource: a.definition.plural }, a.name, errs.length === 1 ? errs[0]! : `[${errs.join(', ')}]`)
        }
      }
    }
  }
}
