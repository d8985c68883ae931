// The JWT authenticators of an AuthenticationConfiguration: loaded, validated and compiled at start, chained by issuer.

import { readFile } from 'node:fs/promises'
import type { ExpressionEvaluator } from '../../../sandbox/expression-evaluator.js'
import { AuthenticationError, type TokenAuthenticator } from '../types.js'
import { ConfigDecodeError } from '../config/decode.js'
import { aggregate, InvalidConfigurationError } from '../config/errors.js'
import { decodeAuthenticationConfiguration, validateAuthenticationConfiguration, type AuthenticationConfiguration } from './config.js'
import { compileJwtExpressions, type JwtExpressions } from './cel.js'
import { createIssuerKeys, SIGNING_ALGORITHMS } from './keys.js'
import { createJwtAuthenticator, type JwtAuthenticator } from './authenticator.js'

/** Reads and decodes --authentication-config; errors name the file as kube-apiserver's do. */
export async function loadAuthenticationConfigFile (path: string): Promise<AuthenticationConfiguration> {
  try {
    return decodeAuthenticationConfiguration(await readFile(path, 'utf8'))
  } catch (err) {
    const why = err instanceof ConfigDecodeError ? err.message : (err as NodeJS.ErrnoException).code === 'ENOENT' ? `open ${path}: no such file or directory` : (err as Error).message
    throw new InvalidConfigurationError(`failed to load authentication configuration from file ${JSON.stringify(path)}: ${why}`)
  }
}

export interface JwtAuthenticatorsOptions {
  /** Compiles and runs the CEL expressions (the sandbox pool). */
  evaluator: ExpressionEvaluator
  /** The service-account issuers: no JWT authenticator may claim them. */
  disallowedIssuers?: string[]
  /** Accepted `alg` values (default: every asymmetric one; the legacy --oidc-signing-algs narrows it). */
  algorithms?: string[]
  /** Least time between two key-set fetches of one issuer (default 10 s). */
  minKeyRefreshIntervalMs?: number
  now?: () => number
}

export interface JwtAuthenticators extends TokenAuthenticator {
  readonly authenticators: JwtAuthenticator[]
  /** Fetches every issuer's discovery and keys now; resolves with the errors of those that could not be reached. */
  prefetch(): Promise<string[]>
  close(): Promise<void>
}

/**
 * Validates `config` (every rule, every CEL expression compiled) and builds one authenticator per entry.
 * Throws InvalidConfigurationError (`invalid authentication configuration: ...`) naming every bad field.
 * No network access happens here: keys are fetched on first need (or by prefetch()).
 */
export async function createJwtAuthenticators (config: AuthenticationConfiguration, o: JwtAuthenticatorsOptions): Promise<JwtAuthenticators> {
  const errors = validateAuthenticationConfiguration(config, { disallowedIssuers: o.disallowedIssuers })
  const compiled: JwtExpressions[] = []
  for (const [i, a] of config.jwt.entries()) {
    const r = await compileJwtExpressions(o.evaluator, a, `jwt[${i}]`)
    compiled.push(r.expressions)
    errors.push(...r.errors)
  }
  if (errors.length > 0) {
    for (const c of compiled) c.release()
    throw new InvalidConfigurationError(`invalid authentication configuration: ${aggregate(errors)}`)
  }
  const algorithms = o.algorithms ?? SIGNING_ALGORITHMS
  const authenticators = config.jwt.map((a, i) => createJwtAuthenticator({
    config: a,
    expressions: compiled[i],
    algorithms,
    now: o.now,
    keys: createIssuerKeys({ issuerUrl: a.issuer.url, certificateAuthority: a.issuer.certificateAuthority, minRefreshIntervalMs: o.minKeyRefreshIntervalMs, now: o.now })
  }))
  return {
    authenticators,
    async authenticateToken (token, audiences) {
      const errs: string[] = []
      for (const a of authenticators) {
        try {
          const r = await a.authenticateToken(token, audiences)
          if (r !== undefined) return r
        } catch (err) {
          if (!(err instanceof AuthenticationError)) throw err
          errs.push(err.message)
        }
      }
      if (errs.length > 0) throw new AuthenticationError(errs.join(', '))
      return undefined
    },
    async prefetch () {
      const out: string[] = []
      await Promise.all(authenticators.map(async (a, i) => {
        try { await a.prefetch() } catch (err) { out.push(`jwt[${i}] ${a.issuer}: ${(err as Error).message}`) }
      }))
      return out
    },
    async close () { await Promise.all(authenticators.map(async a => await a.close())) }
  }
}
