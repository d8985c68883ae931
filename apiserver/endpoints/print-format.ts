// Text forms Kubernetes' printers share: human durations, label maps, label selectors, access modes, endpoints.

type Obj = Record<string, any> // eslint-disable-line @typescript-eslint/no-explicit-any

/** Kubernetes' HumanDuration (`45s`, `3m20s`, `5h`, `2d3h`, ...). */
export function humanDuration (ms: number): string {
  const s = Math.floor(ms / 1000)
  if (s < -1) return '<invalid>'
  if (s < 0) return '0s'
  if (s < 120) return `${s}s`
  const m = Math.floor(s / 60)
  if (m < 10) return s % 60 === 0 ? `${m}m` : `${m}m${s % 60}s`
  if (m < 180) return `${m}m`
  const h = Math.floor(m / 60)
  if (h < 8) return m % 60 === 0 ? `${h}h` : `${h}h${m % 60}m`
  if (h < 48) return `${h}h`
  const d = Math.floor(h / 24)
  if (h < 24 * 8) return h % 24 === 0 ? `${d}d` : `${d}d${h % 24}h`
  if (d < 365 * 2) return `${d}d`
  const y = Math.floor(d / 365)
  if (d < 365 * 8) return d % 365 === 0 ? `${y}y` : `${y}y${d % 365}d`
  return `${y}y`
}

/** Milliseconds of an RFC 3339 time, undefined when absent or unparsable. */
export function timeOf (v: unknown): number | undefined {
  if (typeof v !== 'string' || v === '') return undefined
  const t = Date.parse(v)
  return Number.isNaN(t) ? undefined : t
}

/** translateTimestampSince: the age of a time, `<unknown>` when it is unset. */
export function since (v: unknown, now: number): string {
  const t = timeOf(v)
  return t === undefined ? '<unknown>' : humanDuration(now - t)
}

/** labels.FormatLabels: `k=v` pairs sorted by key, `<none>` when empty. */
export function formatLabels (m: unknown): string {
  const entries = Object.entries((m ?? {}) as Record<string, unknown>)
  if (entries.length === 0) return '<none>'
  return entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([k, v]) => `${k}=${String(v)}`).join(',')
}

/** metav1.LabelSelectorAsSelector(...).String(): requirements sorted by key; empty or absent selects `""`. */
export function selectorString (sel: unknown): string {
  if (sel === null || typeof sel !== 'object') return ''
  const s = sel as Obj
  const reqs: Array<[string, string]> = []
  for (const [k, v] of Object.entries((s.matchLabels ?? {}) as Record<string, unknown>)) reqs.push([k, `${k}=${String(v)}`])
  for (const e of (s.matchExpressions ?? []) as Obj[]) {
    const key = String(e.key ?? '')
    const values = [...((e.values ?? []) as unknown[]).map(String)].sort().join(',')
    if (e.operator === 'In') reqs.push([key, `${key} in (${values})`])
    else if (e.operator === 'NotIn') reqs.push([key, `${key} notin (${values})`])
    else if (e.operator === 'Exists') reqs.push([key, key])
    else if (e.operator === 'DoesNotExist') reqs.push([key, `!${key}`])
  }
  return reqs.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, r]) => r).join(',')
}

const ACCESS_MODES: Array<[string, string]> = [
  ['ReadWriteOnce', 'RWO'], ['ReadOnlyMany', 'ROX'], ['ReadWriteMany', 'RWX'], ['ReadWriteOncePod', 'RWOP']
]

/** GetAccessModesAsString: short forms in Kubernetes' fixed order. */
export function accessModes (modes: unknown): string {
  const list = Array.isArray(modes) ? modes : []
  return ACCESS_MODES.filter(([m]) => list.includes(m)).map(([, short]) => short).join(',')
}

function hostPort (ip: string, port: unknown): string {
  return ip.includes(':') ? `[${ip}]:${String(port)}` : `${ip}:${String(port)}`
}

/** formatEndpoints: up to three `ip:port`, then ` + N more...`; `<none>` without subsets. */
export function formatEndpoints (ep: Obj): string {
  const subsets = (ep.subsets ?? []) as Obj[]
  if (subsets.length === 0) return '<none>'
  const max = 3
  const list: string[] = []
  let count = 0
  for (const ss of subsets) {
    const addrs = (ss.addresses ?? []) as Obj[]
    const ports = (ss.ports ?? []) as Obj[]
    if (ports.length === 0) {
      count += addrs.length
      for (const a of addrs) if (list.length < max) list.push(String(a.ip ?? ''))
      continue
    }
    for (const p of ports) {
      count += addrs.length
      for (const a of addrs) if (list.length < max) list.push(hostPort(String(a.ip ?? ''), p.port))
    }
  }
  let out = list.join(',')
  if (count > max) out += ` + ${count - max} more...`
  return out === '' ? '<none>' : out
}
