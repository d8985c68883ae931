// Splits a request path into its decoded segments (the first step of routing every request).

/**
 * Splits `/a/b/c` into decoded segments; undefined for an empty inner segment or a malformed escape. A path with
 * no '%' decodes to itself, so it takes a scan without regexes or decodeURIComponent (every request parses its path
 * three times: metrics, authorization, routing); `decodedSegments` is the general form it must agree with.
 */
export function segmentsOf (pathname: string): string[] | undefined {
  if (pathname.includes('%')) return decodedSegments(pathname)
  let start = 0
  let end = pathname.length
  while (start < end && pathname.charCodeAt(start) === 0x2f) start++
  while (end > start && pathname.charCodeAt(end - 1) === 0x2f) end--
  if (start === end) return []
  const parts = pathname.slice(start, end).split('/')
  for (const p of parts) if (p === '') return undefined
  return parts
}

/** The general form: trims slashes, splits, decodes each segment. */
export function decodedSegments (pathname: string): string[] | undefined {
  const trimmed = pathname.replace(/^\/+/, '').replace(/\/+$/, '')
  if (trimmed === '') return []
  const parts = trimmed.split('/')
  const out: string[] = []
  for (const p of parts) {
    if (p === '') return undefined
    try { out.push(decodeURIComponent(p)) } catch { return undefined }
  }
  return out
}
