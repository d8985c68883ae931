// Quantities of admission arithmetic: cpu in millicores, everything else in base units; printed as Kubernetes does.

import { milli, quantity } from '../scheduler/resources.js'

const isCpu = (resource: string): boolean => resource === 'cpu' || resource.endsWith('.cpu')

/** A quantity of `resource` as an exact number (millicores for cpu). */
export function amount (resource: string, v: unknown): number {
  return isCpu(resource) ? milli(v) : quantity(v)
}

/** An amount as Kubernetes prints the quantity: `500m`/`2` for cpu, the largest exact binary suffix for bytes. */
export function formatAmount (resource: string, value: number): string {
  if (isCpu(resource)) return value % 1000 === 0 ? String(value / 1000) : `${value}m`
  if (value === 0 || !Number.isInteger(value)) return String(value)
  if (/(memory|storage)$/.test(resource)) {
    for (const [s, f] of [['Ei', 2 ** 60], ['Pi', 2 ** 50], ['Ti', 2 ** 40], ['Gi', 2 ** 30], ['Mi', 2 ** 20], ['Ki', 2 ** 10]] as const) {
      if (value % f === 0) return `${value / f}${s}`
    }
  }
  return String(value)
}
