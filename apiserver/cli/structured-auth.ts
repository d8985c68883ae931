// `orch up` / `orch apiserver`'s structured authentication and authorization: the JWT authenticators and the configured authorizer chain.

import type { Logger } from 'pino'
import { createSandboxPool } from '../../sandbox/pool.js'
import type { RunningAuthorization } from '../auth/authorization-stack.js'
import type { Authorizer, TokenAuthenticator } from '../auth/types.js'
import { createStructuredAuth, type AuthnConfigOptions, type StructuredAuthOptions } from './authn-config-flags.js'

export interface OpenedStructuredAuth {
  /** The JWT authenticators (--authentication-config or --oidc-*), for the token chain. */
  jwt?: TokenAuthenticator
  /** The --authorization-config chain, replacing the --authorization-mode one. */
  authorizer?: Authorizer
  close(): Promise<void>
}

/** An authorizer made later (RBAC and Node watch the registry, which does not exist yet when the chain is built). */
const later = (get: () => Authorizer | undefined, what: string): Authorizer => ({
  authorize: async a => {
    const z = get()
    if (z === undefined) throw new Error(`the ${what} authorizer is not running`)
    return await z.authorize(a)
  }
})

export function structuredAuthRequested (o: AuthnConfigOptions | undefined): o is AuthnConfigOptions {
  return o !== undefined && (o.authenticationConfigFile !== undefined || o.legacyOidc !== undefined || o.authorizationConfigFile !== undefined ||
    o.authorizationConfig !== undefined)
}

/**
 * Loads and checks the files (InvalidConfigurationError naming the field otherwise); CEL expressions run on a sandbox
 * pool of their own. `running` gives the RBAC and Node authorizers once the registry is up.
 */
export async function openStructuredAuth (o: AuthnConfigOptions, serviceAccountIssuers: string[], logger: Logger,
  running: () => RunningAuthorization | undefined, webhookDispatcher?: StructuredAuthOptions['webhookDispatcher']): Promise<OpenedStructuredAuth> {
  const pool = createSandboxPool({ size: 1, limits: { deadlineMs: 250 } })
  try {
    const sa = await createStructuredAuth({
      options: o,
      evaluator: pool,
      serviceAccountIssuers,
      authorizerFactories: { rbac: () => later(() => running()?.rbac.authorizer, 'RBAC'), node: () => later(() => running()?.node, 'Node') },
      onWebhookError: (name, message) => logger.warn({ authorizer: name }, message),
      onIssuerError: message => logger.warn(message),
      webhookDispatcher
    })
    return { jwt: sa.jwt, authorizer: sa.authorizer?.authorizer, close: async () => { await sa.close(); await pool.close() } }
  } catch (err) {
    await pool.close()
    throw err
  }
}
