// Writes a controller's computed status as a merge patch: no resourceVersion to conflict on, removed fields sent as null.

import type { ControllerContext } from './controller.js'
import type { Obj, Resource } from './client/types.js'

const isObject = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v)

/** The RFC 7386 merge patch that turns `from` into `to` (nested objects diffed, lists replaced, removals as null). */
export function mergePatchBetween (from: Obj, to: Obj): Obj {
  const patch: Obj = {}
  for (const [k, v] of Object.entries(to)) {
    const old = from[k]
    if (isObject(v) && isObject(old)) {
      const inner = mergePatchBetween(old, v)
      if (Object.keys(inner).length > 0) patch[k] = inner
    } else if (JSON.stringify(v) !== JSON.stringify(old)) {
      patch[k] = v
    }
  }
  for (const k of Object.keys(from)) if (!(k in to)) patch[k] = null
  return patch
}

/** Patches `obj`'s status to `status` when it differs; a vanished object is not an error. */
export async function writeStatus (c: ControllerContext, resource: Resource, obj: Obj, status: Obj): Promise<void> {
  const patch = mergePatchBetween((obj.status ?? {}) as Obj, status)
  if (Object.keys(patch).length === 0) return
  try {
    await c.client.resource(resource).patch(String(obj.metadata?.namespace ?? ''), String(obj.metadata.name), { status: patch }, 'status')
  } catch (err) {
    if ((err as { code?: number }).code !== 404) throw err
  }
}
