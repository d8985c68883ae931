// SelfSubjectReview (authentication.orch.io v1, v1beta1, v1alpha1; `kubectl auth whoami`): the requesting user as the server sees it.

import { rfc3339 } from '../object-meta.js'
import type { Review } from './virtual-resource.js'
import { userInfoOf } from './token-review.js'

/**
 * Answers the request's user (after impersonation, so `--as` shows the impersonated identity), stamped with the
 * time of the review as kube-apiserver does. Whatever the body held is ignored.
 */
export function selfSubjectReview (now: () => number): Review {
  return async (ctx) => ({ metadata: { creationTimestamp: rfc3339(now()) }, status: { userInfo: userInfoOf(ctx.user) } })
}
