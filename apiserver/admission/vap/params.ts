// The parameter objects a binding's paramRef names: by name, or every object its selector matches.

import type { Registry } from '../../registry/types.js'
import { upstreamGroup } from '../../schema/builtin/upstream-groups.js'
import { isStatusError } from '../../errors/status-error.js'
import { labelSelectorMatches } from '../../registry/label-selector.js'
import { internalContext } from './source.js'
import type { ParamRef } from './types.js'

/** The params found (possibly none), or a message when the paramKind is not served. */
export async function findParams (registry: Registry, kind: { apiVersion?: string, kind?: string }, ref: ParamRef, requestNamespace: string): Promise<unknown[] | string> {
  const [g, v] = (kind.apiVersion ?? '').includes('/') ? kind.apiVersion!.split('/') : ['', kind.apiVersion ?? '']
  const def = registry.definitions().find(d => d.kind === kind.kind && d.version === v &&
    (d.group === g || upstreamGroup(d.group) === g || (upstreamGroup(d.group) !== undefined && d.group === `${g}.orch.io`)))
  if (def === undefined) return `failed to configure binding: paramKind ${kind.apiVersion ?? ''}, Kind=${kind.kind ?? ''} is not served`
  const h = registry.handler(def.group, def.version, def.plural)
  if (h === undefined) return `paramKind ${kind.kind ?? ''} is not served`
  const namespace = def.namespaced ? ((ref.namespace ?? '') !== '' ? ref.namespace! : requestNamespace) : ''
  if (def.namespaced && namespace === '') return 'cannot use namespaced paramRef in policy binding that matches cluster-scoped resources'
  if ((ref.name ?? '') !== '') {
    try {
      return [(await h.get(internalContext(), namespace, ref.name!, {}) as { object: unknown }).object]
    } catch (err) {
      if (isStatusError(err) && err.code === 404) return []
      throw err
    }
  }
  const listed = await h.list(internalContext(), namespace, {})
  return listed.items.map(b => JSON.parse(b.toString()) as { metadata?: { labels?: Record<string, string> } })
    .filter(o => labelSelectorMatches(ref.selector ?? {}, o.metadata?.labels))
}
