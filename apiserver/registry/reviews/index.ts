// The served reviews: one Creater per create-only definition whose dependency was injected (see ReviewDependencies).

import type { Authorizer, RuleResolver } from '../../auth/types.js'
import type { ResourceDefinition } from '../../schema/types.js'
import type { Creater } from '../types.js'
import { accessReview } from './access-reviews.js'
import { selfSubjectRulesReview } from './rules-review.js'
import { selfSubjectReview } from './self-subject-review.js'
import { tokenReview, type TokenReviewAuthenticator } from './token-review.js'
import { virtualResource, type Review } from './virtual-resource.js'

/**
 * What the reviews consult. SelfSubjectReview and TokenReview are always served (a TokenReview without an
 * authenticator answers unauthenticated, as kube-apiserver's); the access reviews need `authorizer`, and
 * SelfSubjectRulesReview needs `ruleResolver`: without them those kinds are not served at all.
 */
export interface ReviewDependencies {
  authenticator?: TokenReviewAuthenticator
  /** --api-audiences (TokenReview's default audiences). */
  apiAudiences?: string[]
  authorizer?: Authorizer
  ruleResolver?: RuleResolver
  now: () => number
}

function reviewOf (def: ResourceDefinition, d: ReviewDependencies): Review | undefined {
  const group = def.group
  switch (def.kind) {
    case 'SelfSubjectReview': return selfSubjectReview(d.now)
    case 'TokenReview': return tokenReview({ authenticator: d.authenticator, apiAudiences: d.apiAudiences ?? [] })
    case 'SubjectAccessReview':
    case 'SelfSubjectAccessReview':
    case 'LocalSubjectAccessReview':
      return d.authorizer === undefined ? undefined : accessReview(def.kind, group, d.authorizer)
    case 'SelfSubjectRulesReview': return d.ruleResolver === undefined ? undefined : selfSubjectRulesReview(d.ruleResolver)
    default: return undefined
  }
}

/** Creaters for the virtual definitions that can be served with `d`; a virtual kind without a review is an error. */
export function createReviews (defs: ResourceDefinition[], d: ReviewDependencies): Creater[] {
  const out: Creater[] = []
  const known = new Set(['SelfSubjectReview', 'TokenReview', 'SubjectAccessReview', 'SelfSubjectAccessReview', 'LocalSubjectAccessReview', 'SelfSubjectRulesReview'])
  for (const def of defs) {
    if (!known.has(def.kind)) throw new Error(`registry: no review serves the create-only kind ${def.kind}`)
    const review = reviewOf(def, d)
    if (review !== undefined) out.push(virtualResource(def, review))
  }
  return out
}
