// Variables cut down to what programs read of them (guest/projection.js tells which properties): less to send
// into the guest and to convert there.

import type { VariableReads } from './sandbox.js'

/** Variable -> the only top-level properties the program reads of it (guest/projection.js). */
export type Projection = Record<string, string[]>

/**
 * The variables with each projected one cut down to the properties the program reads, or undefined when a
 * projected variable is not a plain object (then it is sent whole and through the variables cache).
 */
export function project(variables: Record<string, unknown>, projection: Projection): Record<string, unknown> | undefined {
  const out: Record<string, unknown> = { ...variables }
  for (const name of Object.keys(projection)) {
    const v = variables[name]
    if (v === undefined) continue
    const picked = pick(v, projection[name])
    if (picked === undefined) return undefined
    out[name] = picked
  }
  return out
}

/**
 * JSON.stringify's view of `v` (own properties of a plain object) restricted to `props`; undefined for other values
 * and for a tagged CEL value (`{"@cel": ...}`, which the guest decodes as a whole).
 */
function pick(v: unknown, props: Iterable<string>): Record<string, unknown> | undefined {
  if (v === null || typeof v !== 'object' || Array.isArray(v) || Object.prototype.hasOwnProperty.call(v, '@cel')) return undefined
  const proto = Object.getPrototypeOf(v)
  if ((proto !== Object.prototype && proto !== null) || typeof (v as { toJSON?: unknown }).toJSON === 'function') return undefined
  const picked: Record<string, unknown> = {}
  for (const p of props) if (Object.prototype.hasOwnProperty.call(v, p)) picked[p] = (v as Record<string, unknown>)[p]
  return picked
}

/**
 * `variables` cut down to what `programs` read together (for evaluateMany over one request): a variable read whole
 * by one of them stays whole, one read only through field selections keeps the union of those properties, and one
 * none of them reads is left out. A program whose reads are unknown keeps every variable whole.
 */
export function projectVariables(variables: Record<string, unknown>, programs: Iterable<{ readonly reads?: VariableReads }>): Record<string, unknown> {
  const props = new Map<string, Set<string>>()
  const whole = new Set<string>()
  for (const p of programs) {
    if (p.reads === undefined) return variables
    for (const name of p.reads.whole) whole.add(name)
    for (const [name, ps] of Object.entries(p.reads.projection ?? {})) {
      let set = props.get(name)
      if (set === undefined) props.set(name, (set = new Set()))
      for (const x of ps) set.add(x)
    }
  }
  const out: Record<string, unknown> = {}
  for (const name of Object.keys(variables)) {
    const fields = props.get(name)
    if (whole.has(name) || fields === undefined) {
      if (whole.has(name)) out[name] = variables[name]
      continue
    }
    out[name] = pick(variables[name], fields) ?? variables[name]
  }
  return out
}
