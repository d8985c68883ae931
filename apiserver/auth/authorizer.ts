// --authorization-mode: the ordered authorizers (AlwaysAllow, AlwaysDeny, Node, RBAC) behind system:masters, as kube-apiserver chains them.

import { SYSTEM_MASTERS, type Attributes, type AuthorizationResult, type Authorizer } from './types.js'

export const AUTHORIZATION_MODES = ['AlwaysAllow', 'AlwaysDeny', 'Node', 'RBAC', 'Webhook'] as const
export type AuthorizationMode = typeof AUTHORIZATION_MODES[number]

/** Parses the comma-separated flag; throws an Error with kube-apiserver's wording for unknown or repeated modes. */
export function parseAuthorizationModes (flag: string): AuthorizationMode[] {
  const modes = flag.split(',').map(s => s.trim()).filter(s => s !== '')
  if (modes.length === 0) throw new Error('--authorization-mode: at least one authorization mode must be passed')
  const seen = new Set<string>()
  for (const m of modes) {
    if (!(AUTHORIZATION_MODES as readonly string[]).includes(m)) {
      const later = m === 'ABAC' ? ' (not implemented by orch)' : ''
      throw new Error(`--authorization-mode: authorization-mode "${m}" is not a valid mode${later}; allowed: ${AUTHORIZATION_MODES.join(', ')}`)
    }
    if (seen.has(m)) throw new Error(`--authorization-mode: authorization-mode "${m}" has mode specified more than once`)
    seen.add(m)
  }
  return modes as AuthorizationMode[]
}

export const alwaysAllow: Authorizer = { authorize: async () => ({ decision: 'allow', reason: '' }) }
export const alwaysDeny: Authorizer = { authorize: async () => ({ decision: 'deny', reason: 'Everything is forbidden.' }) }

/** system:masters may do anything, whatever the other authorizers say (kube-apiserver's privileged-group authorizer). */
export const privilegedGroup: Authorizer = {
  authorize: async (a: Attributes) => a.user.groups.includes(SYSTEM_MASTERS) ? { decision: 'allow', reason: '' } : { decision: 'noOpinion', reason: '' }
}

/** The first allow or deny wins; reasons of authorizers without an opinion are joined. */
export function unionAuthorizer (authorizers: Authorizer[]): Authorizer {
  return {
    async authorize (a): Promise<AuthorizationResult> {
      const reasons: string[] = []
      for (const z of authorizers) {
        const r = await z.authorize(a)
        if (r.decision !== 'noOpinion') return r
        if (r.reason !== '') reasons.push(r.reason)
      }
      return { decision: 'noOpinion', reason: reasons.join('\n') }
    }
  }
}

/** Makers of the authorizers that need the running server (they watch the registry); called once each, when their mode is on. */
export interface AuthorizerFactories {
  rbac: () => Authorizer
  node?: () => Authorizer
}

/** The chain for the modes; `factories` (or a bare RBAC maker) supply Node and RBAC. */
export function buildAuthorizer (modes: AuthorizationMode[], factories: AuthorizerFactories | (() => Authorizer)): Authorizer {
  const f: AuthorizerFactories = typeof factories === 'function' ? { rbac: factories } : factories
  const chain: Authorizer[] = [privilegedGroup]
  for (const m of modes) {
    switch (m) {
      case 'AlwaysAllow': chain.push(alwaysAllow); break
      case 'AlwaysDeny': chain.push(alwaysDeny); break
      case 'RBAC': chain.push(f.rbac()); break
      case 'Node':
        if (f.node === undefined) throw new Error('--authorization-mode: Node needs the node authorizer')
        chain.push(f.node())
        break
      case 'Webhook': throw new Error('--authorization-mode: Webhook is built as an AuthorizationConfiguration (cli/authn-config-flags.ts)')
    }
  }
  return unionAuthorizer(chain)
}
