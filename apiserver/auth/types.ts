// The contracts of authentication and authorization: who is asking (UserInfo), what they ask (Attributes), the answers.

import type { IncomingMessage } from 'node:http'
import type { UserInfo } from '../registry/types.js'

export type { UserInfo }

/** Well-known users and groups (Kubernetes' names, which orch keeps: clients and policies depend on them). */
export const SYSTEM_MASTERS = 'system:masters'
export const AUTHENTICATED = 'system:authenticated'
export const UNAUTHENTICATED = 'system:unauthenticated'
export const ANONYMOUS = 'system:anonymous'

/** A successful authentication: the user, and the audiences the credential was meant for (tokens). */
export interface AuthResult { user: UserInfo; audiences?: string[] }

/**
 * One way of authenticating a request. `undefined`: this authenticator found no credential of its kind.
 * Throws AuthenticationError when a credential of its kind is there but not valid.
 */
export interface RequestAuthenticator {
  authenticate(req: IncomingMessage): Promise<AuthResult | undefined>
}

/** A bearer-token authenticator; `audiences` are the ones the API server (or a TokenReview) accepts. */
export interface TokenAuthenticator {
  authenticateToken(token: string, audiences: string[]): Promise<AuthResult | undefined>
}

/** A credential was presented and refused; the message is logged and shown in TokenReview status.error. */
export class AuthenticationError extends Error {
  override readonly name = 'AuthenticationError'
}

/** What a request asks to do, as an authorizer sees it (Kubernetes' authorizer.Attributes). */
export interface Attributes {
  user: UserInfo
  verb: string
  /** Resource requests: group ('' core), version, resource, subresource, namespace, name. */
  resourceRequest: boolean
  apiGroup: string
  apiVersion: string
  resource: string
  subresource: string
  namespace: string
  name: string
  /** Non-resource requests: the path (e.g. /healthz). */
  path: string
}

export type Decision = 'allow' | 'deny' | 'noOpinion'

export interface AuthorizationResult { decision: Decision; reason: string }

export interface Authorizer {
  authorize(attrs: Attributes): Promise<AuthorizationResult>
}

/** A rule of an authorizer's rules review (SelfSubjectRulesReview). */
export interface ResourceRuleInfo { verbs: string[]; apiGroups: string[]; resources: string[]; resourceNames: string[] }
export interface NonResourceRuleInfo { verbs: string[]; nonResourceURLs: string[] }

export interface RulesResult { resourceRules: ResourceRuleInfo[]; nonResourceRules: NonResourceRuleInfo[]; incomplete: boolean; evaluationError?: string }

export interface RuleResolver {
  /** Every rule that applies to `user` in `namespace`; `incomplete` when some could not be resolved. May answer later (RBAC reads roles). */
  rulesFor(user: UserInfo, namespace: string): RulesResult | Promise<RulesResult>
}

export function resourceAttributes (user: UserInfo, a: Partial<Omit<Attributes, 'user' | 'resourceRequest' | 'path'>> & { verb: string }): Attributes {
  return {
    user, resourceRequest: true, path: '', verb: a.verb, apiGroup: a.apiGroup ?? '', apiVersion: a.apiVersion ?? '*',
    resource: a.resource ?? '', subresource: a.subresource ?? '', namespace: a.namespace ?? '', name: a.name ?? ''
  }
}

export function nonResourceAttributes (user: UserInfo, verb: string, path: string): Attributes {
  return { user, resourceRequest: false, path, verb, apiGroup: '', apiVersion: '', resource: '', subresource: '', namespace: '', name: '' }
}
