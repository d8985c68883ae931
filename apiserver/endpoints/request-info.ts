// Parses a resource path of spec 4.1 (plus the method and query) into what the request is about.

import { segmentsOf } from './path-segments.js'
import { badRequest, methodNotAllowed, notFound, pathNotFound, type StatusError } from '../errors/status-error.js'

export type Verb = 'get' | 'list' | 'watch' | 'create' | 'update' | 'patch' | 'delete' | 'deletecollection'

export interface RequestInfo {
  apiPrefix: 'api' | 'apis'
  group: string
  version: string
  /** '' for cluster scope (and for `/api/v1/namespaces/{name}` itself, where the name is the namespace). */
  namespace: string
  resource: string
  name: string
  subresource: string
  verb: Verb
  /** The path after `{name}/proxy` of a proxy request (`/stats/summary`; '' when none), segments re-encoded as sent. */
  proxyPath?: string
}

/** A path below /api or /apis that is a group or version root rather than a resource (discovery). */
export interface DiscoveryPath { apiPrefix: 'api' | 'apis'; group?: string; version?: string }

export type ParsedPath =
  | { kind: 'resource'; info: RequestInfo }
  | { kind: 'discovery'; path: DiscoveryPath }

function truthy (v: string | null): boolean {
  return v !== null && v !== '' && v !== '0' && v.toLowerCase() !== 'false'
}

function verbFor (method: string, hasName: boolean, watch: boolean, what: string, hasSubresource = false): Verb | StatusError {
  switch (method) {
    case 'GET':
    case 'HEAD':
      if (watch) return 'watch'
      return hasName ? 'get' : 'list'
    case 'POST':
      // POST names an object only through a subresource (pods/{name}/binding, pods/{name}/eviction).
      return hasName && !hasSubresource ? methodNotAllowed(method, what) : 'create'
    case 'PUT':
      return hasName ? 'update' : methodNotAllowed(method, what)
    case 'PATCH':
      return hasName ? 'patch' : methodNotAllowed(method, what)
    case 'DELETE':
      return hasName ? 'delete' : 'deletecollection'
    default:
      return methodNotAllowed(method, what)
  }
}

/** The path of a request target as sent, never normalised (WHATWG URLs resolve `..` and `%2e%2e`). */
export function rawPath (target: string): string {
  const q = target.indexOf('?')
  return q < 0 ? target : target.slice(0, q)
}

/** Whether a path has a segment that is, or decodes to, `.` or `..` (such a path is never routed by a normalised form). */
export function hasDotSegment (path: string): boolean {
  // Such a segment has a '.' or an escape; most paths have neither, so routing skips the split and the decoding.
  if (!path.includes('.') && !path.includes('%')) return false
  return path.split('/').some(p => {
    let d = p
    try { d = decodeURIComponent(p) } catch {}
    return d === '.' || d === '..'
  })
}

/** Kubernetes' IsValidPathSegmentName: what a name must not be to sit in a path (and a storage key). */
export function pathSegmentProblems (name: string): string[] {
  const out: string[] = []
  if (name === '.' || name === '..') out.push(`may not be '${name}'`)
  if (name.includes('/')) out.push("may not contain '/'")
  if (name.includes('%')) out.push("may not contain '%'")
  return out
}

const parsedByUrl = new WeakMap<URL, { method: string, path: string, href: string, parsed: ParsedPath | StatusError }>()

/**
 * `parseRequestInfo` once per request: metrics, authorization, audit and routing each ask about the same request
 * (its URL object), so the answer is kept with that URL while the method, path and URL are the ones it was for.
 * Callers only read what it returns.
 */
export function requestInfoOf (method: string, url: URL, path: string): ParsedPath | StatusError {
  const href = url.href
  const known = parsedByUrl.get(url)
  if (known !== undefined && known.method === method && known.path === path && known.href === href) return known.parsed
  const parsed = parseRequestInfo(method, url, path)
  parsedByUrl.set(url, { method, path, href, parsed })
  return parsed
}

/**
 * Parses method + URL into a RequestInfo, a discovery path, or an error (404 for shapes that name
 * nothing, 405 for methods a shape does not take, 400 for a name that cannot be a path segment). The path
 * is taken as sent (`path`), never normalised. Whether the resource exists is not checked here.
 */
export function parseRequestInfo (method: string, url: URL, path = url.pathname): ParsedPath | StatusError {
  const segs = segmentsOf(path)
  if (segs === undefined || segs.length === 0) return pathNotFound()
  const prefix = segs[0]
  if (prefix !== 'api' && prefix !== 'apis') return pathNotFound()
  let rest = segs.slice(1)
  let group = ''
  if (prefix === 'apis') {
    if (rest.length === 0) return { kind: 'discovery', path: { apiPrefix: 'apis' } }
    group = rest[0]
    rest = rest.slice(1)
    if (rest.length === 0) return { kind: 'discovery', path: { apiPrefix: 'apis', group } }
  } else if (rest.length === 0) {
    return { kind: 'discovery', path: { apiPrefix: 'api' } }
  }
  const version = rest[0]
  rest = rest.slice(1)
  if (rest.length === 0) return { kind: 'discovery', path: { apiPrefix: prefix, group, version } }

  let namespace = ''
  // `namespaces/{ns}/{resource}...` scopes to a namespace; `namespaces` or `namespaces/{name}[/sub]` is the
  // cluster-scoped namespace resource itself.
  if (rest[0] === 'namespaces' && rest.length >= 3 && !(rest.length === 3 && (rest[2] === 'status' || rest[2] === 'finalize'))) {
    namespace = rest[1]
    rest = rest.slice(2)
  }
  // `{resource}/{name}/proxy/{path...}`: the rest of the path belongs to the proxied server.
  let proxyPath: string | undefined
  if (rest.length >= 3 && rest[2] === 'proxy') {
    proxyPath = rest.slice(3).map(encodeURIComponent).join('/')
    proxyPath = proxyPath === '' ? (path.endsWith('/') ? '/' : '') : '/' + proxyPath + (path.endsWith('/') ? '/' : '')
    rest = rest.slice(0, 3)
  }
  if (rest.length > 3) return pathNotFound()
  const [resource, name = '', subresource = ''] = rest
  if (pathSegmentProblems(namespace).length > 0) return notFound({ group: '', resource: 'namespaces' }, namespace)
  if (subresource !== '' && pathSegmentProblems(subresource).length > 0) return pathNotFound()
  const nameProblems = pathSegmentProblems(name)
  if (nameProblems.length > 0) return badRequest(`Name parameter invalid: ${JSON.stringify(name)}: ${nameProblems.join(';')}`)
  const watch = truthy(url.searchParams.get('watch'))
  const what = describe(group, resource, name, subresource)
  if (proxyPath !== undefined && name !== '') {
    // Proxy verbs are the HTTP methods' (Kubernetes' connect verbs): no list or watch, DELETE on the subresource allowed.
    const verb = proxyVerb(method)
    if (verb === undefined) return methodNotAllowed(method, what)
    return { kind: 'resource', info: { apiPrefix: prefix, group, version, namespace, resource, name, subresource, verb, proxyPath } }
  }
  if (subresource !== '' && method === 'DELETE') return methodNotAllowed(method, what)
  const verb = verbFor(method, name !== '', watch, what, subresource !== '')
  if (typeof verb !== 'string') return verb
  return {
    kind: 'resource',
    info: { apiPrefix: prefix, group, version, namespace, resource, name, subresource, verb }
  }
}

function proxyVerb (method: string): Verb | undefined {
  switch (method) {
    case 'GET': case 'HEAD': case 'OPTIONS': return 'get'
    case 'POST': return 'create'
    case 'PUT': return 'update'
    case 'PATCH': return 'patch'
    case 'DELETE': return 'delete'
    default: return undefined
  }
}

function describe (group: string, resource: string, name: string, subresource: string): string {
  const r = group === '' ? resource : `${resource}.${group}`
  if (name === '') return `the collection ${r}`
  return subresource === '' ? `${r} "${name}"` : `${r}/${subresource} "${name}"`
}
