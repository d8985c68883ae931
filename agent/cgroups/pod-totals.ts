// A pod's total request or limit of one resource, as the kubelet's resource helpers sum it (containers, then init containers).

import { parseQuantity } from '../config/quantity.js'
import type { Container, Pod } from '../pods/pod-types.js'

function amount (c: Container, kind: 'requests' | 'limits', resource: string): number | undefined {
  const v = kind === 'requests' ? (c.resources?.requests?.[resource] ?? c.resources?.limits?.[resource]) : c.resources?.limits?.[resource]
  return v === undefined ? undefined : parseQuantity(v)
}

/** Sum over containers, or the largest init container's, whichever is larger; `all` is false when some container lacks it. */
export function podTotal (pod: Pod, kind: 'requests' | 'limits', resource: string): { value: number, all: boolean } {
  const main = pod.spec.containers.map(c => amount(c, kind, resource))
  const init = (pod.spec.initContainers ?? []).map(c => amount(c, kind, resource))
  const sum = main.reduce<number>((a, v) => a + (v ?? 0), 0)
  const value = Math.max(sum, ...init.map(v => v ?? 0))
  return { value, all: [...main, ...init].every(v => v !== undefined) }
}
