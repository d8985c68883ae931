// Aggregated discovery (AggregatedDiscoveryEndpoint, beta in v1.29): /api and /apis answered as one
// APIGroupDiscoveryList (apidiscovery.k8s.io/v2beta1) with every version's resources, when the client asks for it.

/** The media type a v1.29 server answers aggregated discovery with (kubectl sends it in its Accept list). */
export const AGGREGATED_DISCOVERY_TYPE = 'application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList'

interface MediaRange { type: string; params: Record<string, string> }

function parseAccept (accept: string): MediaRange[] {
  return accept.split(',').map(part => {
    const [type = '', ...rest] = part.split(';').map(s => s.trim())
    const params: Record<string, string> = {}
    for (const p of rest) {
      const eq = p.indexOf('=')
      if (eq > 0) params[p.slice(0, eq).toLowerCase()] = p.slice(eq + 1).replace(/^"|"$/g, '')
    }
    return { type: type.toLowerCase(), params }
  }).filter(r => r.type !== '')
}

/**
 * Whether the Accept list prefers aggregated discovery: the first entry this server can answer decides. An entry
 * naming another `as`, group or version (v2, v2beta2) is skipped, as a v1.29 server skips what it cannot serve.
 */
export function wantsAggregatedDiscovery (accept: string | undefined): boolean {
  for (const r of parseAccept(accept ?? '')) {
    const json = r.type === 'application/json' || r.type === 'application/*' || r.type === '*/*'
    if (!json) continue
    if (r.params.as === undefined) return false
    if (r.params.as === 'APIGroupDiscoveryList' && r.params.g === 'apidiscovery.k8s.io' && r.params.v === 'v2beta1') return true
  }
  return false
}

type Entry = Record<string, unknown>
interface GroupVersionKind { group: string; version: string; kind: string }

/** One version's resources in the aggregated shape, from the legacy APIResourceList entries of that version. */
export function aggregatedResources (group: string, version: string, entries: Entry[]): Entry[] {
  const byName = new Map<string, Entry>()
  const out: Entry[] = []
  const kindOf = (e: Entry): GroupVersionKind => ({
    group: typeof e.group === 'string' ? e.group : group, version: typeof e.version === 'string' ? e.version : version, kind: String(e.kind)
  })
  for (const e of entries) {
    const name = String(e.name)
    if (name.includes('/')) continue
    const r: Entry = {
      resource: name,
      responseKind: kindOf(e),
      scope: e.namespaced === true ? 'Namespaced' : 'Cluster',
      singularResource: e.singularName ?? '',
      verbs: e.verbs ?? []
    }
    if (Array.isArray(e.shortNames)) r.shortNames = e.shortNames
    if (Array.isArray(e.categories)) r.categories = e.categories
    byName.set(name, r)
    out.push(r)
  }
  for (const e of entries) {
    const [parent, sub] = String(e.name).split('/')
    const r = sub === undefined ? undefined : byName.get(parent!)
    if (r === undefined) continue
    const subs = (r.subresources ??= []) as Entry[]
    subs.push({ subresource: sub, responseKind: kindOf(e), verbs: e.verbs ?? [] })
  }
  return out
}

/** The list document: one item per group (`""` for the core group), versions in priority order. */
export function aggregatedList (groups: Array<{ name: string; versions: Array<{ version: string; resources: Entry[] }> }>): Entry {
  return {
    kind: 'APIGroupDiscoveryList',
    apiVersion: 'apidiscovery.k8s.io/v2beta1',
    metadata: {},
    items: groups.map(g => ({
      metadata: g.name === '' ? { creationTimestamp: null } : { name: g.name, creationTimestamp: null },
      versions: g.versions.map(v => ({ version: v.version, resources: v.resources, freshness: 'Current' }))
    }))
  }
}
