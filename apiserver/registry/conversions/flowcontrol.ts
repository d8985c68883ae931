// flowcontrol v1beta3 <-> v1 (stored): one shape; PriorityLevelConfigurations carry the zero-shares rule of spec §9.4.
//
// v1beta3's nominalConcurrencyShares is not optional: 0 there means "unset" (defaults to 30) unless the object carries
// the preserve annotation, which is how a v1 object's explicit 0 reads back through v1beta3.
import type { Obj } from '../object-meta.js'

export const PRESERVE_ZERO = 'flowcontrol.orch.io/v1beta3-preserve-zero-concurrency-shares'
const PRESERVE_ZERO_UPSTREAM = 'flowcontrol.k8s.io/v1beta3-preserve-zero-concurrency-shares'
const DEFAULT_SHARES = 30

const isBeta = (apiVersion: string): boolean => apiVersion.endsWith('/v1beta3')

export function convertFlowcontrol (obj: Obj, apiVersion: string): Obj {
  const out: Obj = { ...obj, apiVersion }
  const limited = (obj.spec as { limited?: Obj } | undefined)?.limited
  if (obj.kind !== 'PriorityLevelConfiguration' || limited === undefined) return out
  const meta = { ...((obj.metadata ?? {}) as Obj) }
  const annotations = { ...((meta.annotations ?? {}) as Record<string, string>) }
  const shares = limited.nominalConcurrencyShares
  const lim = { ...limited }
  if (isBeta(apiVersion)) {
    // v1 -> v1beta3: an explicit zero is marked so that it survives the way back.
    if (shares === 0) annotations[PRESERVE_ZERO] = ''
  } else {
    const preserve = PRESERVE_ZERO in annotations || PRESERVE_ZERO_UPSTREAM in annotations
    if ((shares === undefined || shares === 0) && !preserve) lim.nominalConcurrencyShares = DEFAULT_SHARES
    if (shares === undefined && preserve) lim.nominalConcurrencyShares = 0
    delete annotations[PRESERVE_ZERO]
    delete annotations[PRESERVE_ZERO_UPSTREAM]
  }
  if (Object.keys(annotations).length > 0) meta.annotations = annotations
  else delete meta.annotations
  out.metadata = meta
  out.spec = { ...(obj.spec as Obj), limited: lim }
  return out
}
