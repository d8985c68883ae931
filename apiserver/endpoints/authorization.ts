// The authorization step: a named wrapper that asks the authorizer about the request and answers 403 as kube-apiserver words it.

import type { IncomingMessage } from 'node:http'
import { forbidden, StatusError } from '../errors/status-error.js'
import { nonResourceAttributes, resourceAttributes, type Attributes, type Authorizer, type UserInfo } from '../auth/types.js'
import { rawPath, requestInfoOf } from './request-info.js'
import type { RequestHandler } from './request-limits.js'

/** What the request asks, as Kubernetes' RequestInfoResolver sees it: resource requests below /api and /apis, else a path. */
export function requestAttributes (req: IncomingMessage, url: URL, user: UserInfo): Attributes {
  const method = req.method ?? 'GET'
  const path = rawPath(req.url ?? '/')
  const parsed = requestInfoOf(method, url, path)
  if (parsed instanceof StatusError || parsed.kind === 'discovery') {
    return nonResourceAttributes(user, method === 'HEAD' ? 'get' : method.toLowerCase(), path)
  }
  const i = parsed.info
  // A namespace object is inside itself (a RoleBinding in "a" may grant `get namespaces` on "a").
  const namespace = i.group === '' && i.resource === 'namespaces' && i.name !== '' ? i.name : i.namespace
  let name = i.name
  if (name === '' && (i.verb === 'list' || i.verb === 'watch')) {
    // `fieldSelector=metadata.name=x` narrows a list or watch to one name, as Kubernetes authorizes it.
    const m = /^metadata\.name==?([^,]+)$/.exec(url.searchParams.get('fieldSelector') ?? '')
    if (m !== null) name = m[1]
  }
  return resourceAttributes(user, { verb: i.verb, apiGroup: i.group, apiVersion: i.version, resource: i.resource, subresource: i.subresource, namespace, name })
}

/** Kubernetes' forbiddenMessage. */
export function forbiddenMessage (a: Attributes): string {
  const who = `User ${JSON.stringify(a.user.username)}`
  if (!a.resourceRequest) return `${who} cannot ${a.verb} path ${JSON.stringify(a.path)}`
  const resource = a.subresource === '' ? a.resource : `${a.resource}/${a.subresource}`
  const where = a.namespace === '' ? 'at the cluster scope' : `in the namespace ${JSON.stringify(a.namespace)}`
  return `${who} cannot ${a.verb} resource ${JSON.stringify(resource)} in API group ${JSON.stringify(a.apiGroup)} ${where}`
}

/** The 403 Status kube-apiserver answers (apierrors.NewForbidden over the message and the authorizer's reason). */
export function forbiddenError (a: Attributes, reason: string): StatusError {
  const msg = reason === '' ? forbiddenMessage(a) : `${forbiddenMessage(a)}: ${reason}`
  if (!a.resourceRequest || a.resource === '') return new StatusError(403, 'Forbidden', `forbidden: ${msg}`, {})
  return forbidden({ group: a.apiGroup, resource: a.resource }, a.name, msg)
}

/** The audit annotations kube-apiserver's authorization step adds (decision allow/forbid, and the authorizer's reason). */
export const DECISION_ANNOTATION = 'authorization.k8s.io/decision'
export const REASON_ANNOTATION = 'authorization.k8s.io/reason'

/**
 * Lets the request through when the authorizer allows it; otherwise 403. Needs `target.user` (withAuthentication).
 * The decision and reason go on the request's audit event when it is audited (`target.audit`, endpoints/audit.ts).
 */
export function withAuthorization (authorizer: Authorizer, next: RequestHandler): RequestHandler {
  return async (req, res, target) => {
    if (target.user === undefined) throw new Error('withAuthorization needs an authenticated user')
    const attrs = requestAttributes(req, target.url, target.user)
    let r
    try {
      r = await authorizer.authorize(attrs)
    } catch (err) {
      target.audit?.annotate(REASON_ANNOTATION, 'internal error')
      throw err
    }
    target.audit?.annotate(DECISION_ANNOTATION, r.decision === 'allow' ? 'allow' : 'forbid')
    target.audit?.annotate(REASON_ANNOTATION, r.reason)
    if (r.decision !== 'allow') throw forbiddenError(attrs, r.reason)
    await next(req, res, target)
  }
}
