// May this caller do this to the node? AlwaysAllow, or a SubjectAccessReview per the kubelet's attribute mapping.

import type { ApiClient } from '../../apiserver/client/rest-client.js'
import type { User } from './authn.js'
import { createTtlCache } from './ttl-cache.js'

export interface Attributes { verb: string; resource: 'nodes'; subresource: string; name: string }

export interface AuthzOptions {
  mode: 'AlwaysAllow' | 'Webhook'
  webhook?: { client: ApiClient; authorizedTtlMs: number; unauthorizedTtlMs: number }
  now: () => number
}

export interface Decision { allowed: boolean; reason: string }
export type Authorizer = (user: User, attrs: Attributes) => Promise<Decision>

const VERBS: Record<string, string> = { GET: 'get', HEAD: 'get', POST: 'create', PUT: 'update', PATCH: 'patch', DELETE: 'delete' }

/** The kubelet 1.29 mapping of path prefixes to node subresources (isSubpath: the path itself or below it). */
const SUBRESOURCES: Array<[string, string]> = [['/stats', 'stats'], ['/metrics', 'metrics'], ['/logs', 'log'], ['/spec', 'spec'], ['/checkpoint', 'checkpoint']]

function isSubpath (path: string, prefix: string): boolean {
  return path === prefix || path.startsWith(`${prefix}/`)
}

/** The kubelet's mapping of paths to node subresources; everything else (/pods, /healthz, /configz, /containerLogs, ...) is `proxy`. */
export function attributesFor (method: string, path: string, nodeName: string): Attributes {
  const subresource = SUBRESOURCES.find(([prefix]) => isSubpath(path, prefix))?.[1] ?? 'proxy'
  return { verb: VERBS[method] ?? 'get', resource: 'nodes', subresource, name: nodeName }
}

export function createAuthorizer (o: AuthzOptions): Authorizer {
  if (o.mode === 'AlwaysAllow') return async () => ({ allowed: true, reason: '' })
  const webhook = o.webhook
  if (webhook === undefined) throw new Error('authorization mode Webhook needs an API server connection')
  const cache = createTtlCache<Decision>(o.now)
  return async (user, attrs) => {
    const key = JSON.stringify([user.name, user.uid, user.groups, attrs])
    const cached = cache.get(key)
    if (cached !== undefined) return cached
    const review = await webhook.client.create('/apis/authorization.orch.io/v1/subjectaccessreviews', {
      apiVersion: 'authorization.orch.io/v1',
      kind: 'SubjectAccessReview',
      spec: {
        user: user.name,
        uid: user.uid,
        groups: user.groups,
        extra: user.extra,
        resourceAttributes: { verb: attrs.verb, resource: attrs.resource, subresource: attrs.subresource, name: attrs.name, group: '' }
      }
    }, { exempt: true })
    const status = review.status as { allowed?: boolean; reason?: string } | undefined
    const decision = { allowed: status?.allowed === true, reason: status?.reason ?? '' }
    cache.set(key, decision, decision.allowed ? webhook.authorizedTtlMs : webhook.unauthorizedTtlMs)
    return decision
  }
}
