// Event: core v1 (stored) <-> events.k8s.io/v1 (served), the same objects under renamed fields.
import type { Obj } from '../object-meta.js'

/** events.k8s.io/v1 name -> core v1 name; fields absent here keep their names (action, reason, type, eventTime, series, related). */
const renamed: Array<[string, string]> = [
  ['regarding', 'involvedObject'],
  ['note', 'message'],
  ['reportingController', 'reportingComponent'],
  ['deprecatedSource', 'source'],
  ['deprecatedFirstTimestamp', 'firstTimestamp'],
  ['deprecatedLastTimestamp', 'lastTimestamp'],
  ['deprecatedCount', 'count'],
]

function rename (obj: Obj, apiVersion: string, pairs: Array<[string, string]>): Obj {
  const out: Obj = { ...obj, apiVersion }
  for (const [from, to] of pairs) {
    if (!(from in out)) continue
    if (out[from] !== undefined) out[to] = out[from]
    delete out[from]
  }
  return out
}

/** To `apiVersion`: core (`v1`) or events.k8s.io/v1 (any other group). */
export function convertEvent (obj: Obj, apiVersion: string): Obj {
  if (apiVersion === 'v1') {
    const out = rename(obj, apiVersion, renamed)
    if (out.eventTime === null) delete out.eventTime
    return out
  }
  // events.k8s.io/v1 always has eventTime (Go's zero MicroTime is null): an old-style core event reads, and
  // updates, with `eventTime: null`.
  const out = rename(obj, apiVersion, renamed.map(([a, b]) => [b, a]))
  if (out.eventTime === undefined) out.eventTime = null
  return out
}
