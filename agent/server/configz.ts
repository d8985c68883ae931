// /configz: the running configuration as the kubelet serves it, `{"orchletconfig": {...}}` in OrchletConfiguration's field layout.

import { SETTINGS, type SettingSpec } from '../config/settings.js'
import * as k from '../config/kinds.js'
import type { OrchletConfig } from '../config/types.js'

/** Kinds whose file form is a map printed by `show` as `key=value,...` (or `signal<value,...`). */
const MAP_KINDS = new Set<unknown>([k.thresholds, k.gracePeriods, k.reclaims, k.reservation, k.qosReserved])
/** Kinds whose file form is the string `show` prints (durations like 2m0s, quantities like 100Mi, CPU lists). */
const STRING_KINDS = new Set<unknown>([k.duration, k.bytes, k.byteSize, k.cpuList])

function shownMap (text: string): Record<string, string> {
  const out: Record<string, string> = {}
  for (const part of text.split(',')) {
    if (part === '') continue
    const at = part.search(/[<=]/)
    out[part.slice(0, at)] = part.slice(at + 1)
  }
  return out
}

/** One option's value in its config-file form. */
function fileForm (o: SettingSpec, value: unknown): unknown {
  if (MAP_KINDS.has(o.kind)) return shownMap(o.kind.show(value))
  if (STRING_KINDS.has(o.kind)) return o.kind.show(value)
  if (o.kind === k.reservedMemory) {
    return (value as Array<{ numaNode: number; limits: Record<string, number> }>).map(m => ({ numaNode: m.numaNode, limits: shownMap(k.reservation.show(m.limits)) }))
  }
  if (o.kind === k.vmodule) return Object.entries(value as Record<string, number>).map(([filePattern, verbosity]) => ({ filePattern, verbosity }))
  return value
}

function setPath (into: Record<string, unknown>, path: string, value: unknown): void {
  const keys = path.split('.')
  let at = into
  for (const key of keys.slice(0, -1)) {
    const next = at[key]
    at = (typeof next === 'object' && next !== null ? next : (at[key] = {})) as Record<string, unknown>
  }
  at[keys[keys.length - 1]!] = value
}

/** Every setting that has a config-file field (file-only ones too), at that field, in the file's spelling. */
export function configzOf (config: OrchletConfig): { orchletconfig: Record<string, unknown> } {
  const out: Record<string, unknown> = {}
  const values = config as unknown as Record<string, unknown>
  for (const o of SETTINGS) {
    if (o.field === undefined) continue
    setPath(out, o.field, fileForm(o, values[o.key]))
  }
  return { orchletconfig: out }
}
