// Read-only accessors over a pod's metadata and spec as the checks see them, and the wording of who set what.

export type Obj = Record<string, unknown>

/** What the checks look at: a pod's (or a pod template's) metadata and spec. */
export interface PodView { metadata: Obj, spec: Obj }

/** A check's finding, printed as `reason (detail)`. */
export interface Violation { reason: string, detail: string }

export function obj (v: unknown): Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? v as Obj : {}
}

export function list (v: unknown): Obj[] {
  return Array.isArray(v) ? v.map(obj) : []
}

export function str (v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined
}

/** Containers, init containers and ephemeral containers, as the policy visits them. */
export function allContainers (spec: Obj): Obj[] {
  return [...list(spec.containers), ...list(spec.initContainers), ...list(spec.ephemeralContainers)]
}

export function securityContext (o: Obj): Obj {
  return obj(o.securityContext)
}

export function containerName (c: Obj): string {
  return str(c.name) ?? ''
}

export function isWindowsPod (spec: Obj): boolean {
  return str(obj(spec.os).name) === 'windows'
}

export function annotations (p: PodView): Record<string, string> {
  const out: Record<string, string> = {}
  for (const [k, v] of Object.entries(obj(p.metadata.annotations))) if (typeof v === 'string') out[k] = v
  return out
}

export const quote = (s: string | number): string => JSON.stringify(String(s))

export const quoteAll = (xs: Array<string | number>): string => xs.map(quote).join(', ')

/** `container "a"` or `containers "a", "b"` (noun: container, volume, ...). */
export function named (noun: string, names: string[]): string {
  return `${noun}${names.length === 1 ? '' : 's'} ${quoteAll(names)}`
}

/** `pod`, `container "a"`, `pod and containers "a", "b"`: who set a forbidden value. */
export function setters (pod: boolean, containers: string[]): string {
  const parts: string[] = []
  if (pod) parts.push('pod')
  if (containers.length > 0) parts.push(named('container', containers))
  return parts.join(' and ')
}

/** Adds `v` to `xs` unless there. */
export function addUnique<T> (xs: T[], v: T): void {
  if (!xs.includes(v)) xs.push(v)
}
