// Deep equality of JSON values held apart, so validation can tell a value it accepted before from its copy.

/**
 * Whether `a` and `b` are the same JSON (member order aside) in separate objects. False when they share an object:
 * what is shared may have been changed through the other side since it was accepted, so it is not vouched for.
 */
export function sameJsonApart (a: unknown, b: unknown): boolean {
  if (a === null || typeof a !== 'object') return a === b
  if (b === null || typeof b !== 'object' || a === b) return false
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false
    for (let i = 0; i < a.length; i++) if (!sameJsonApart(a[i], b[i])) return false
    return true
  }
  if (Array.isArray(b)) return false
  const ra = a as Record<string, unknown>
  const rb = b as Record<string, unknown>
  let members = 0
  for (const k in ra) {
    if (!Object.prototype.hasOwnProperty.call(rb, k) || !sameJsonApart(ra[k], rb[k])) return false
    members++
  }
  for (const k in rb) if (Object.prototype.hasOwnProperty.call(rb, k)) members--
  return members === 0
}
