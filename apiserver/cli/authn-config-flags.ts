// The flags of structured authentication/authorization (--authentication-config, --authorization-config, --oidc-*), checked as kube-apiserver does.

import { readFile } from 'node:fs/promises'
import { parseDuration, UsageError, type FlagSpec, type Flags } from './args.js'
import type { AuthenticationConfiguration, JWTAuthenticator } from '../auth/jwt/config.js'
import { SIGNING_ALGORITHMS } from '../auth/jwt/keys.js'
import { createJwtAuthenticators, loadAuthenticationConfigFile, type JwtAuthenticators } from '../auth/jwt/jwt-authenticators.js'
import { InvalidConfigurationError } from '../auth/config/errors.js'
import { buildConfiguredAuthorizer, loadAuthorizationConfigFile, type AuthorizerFactories, type ConfiguredAuthorizer, type ConfiguredAuthorizerOptions } from '../auth/authz-config/build.js'
import type { ExpressionEvaluator } from '../../sandbox/expression-evaluator.js'
import type { AuthorizationConfiguration } from '../auth/authz-config/config.js'

export const AUTHN_CONFIG_FLAGS: FlagSpec[] = [
  { name: 'authentication-config', kind: 'string', help: 'AuthenticationConfiguration file (JWT authenticators); needs --feature-gates=StructuredAuthenticationConfiguration=true; excludes the --oidc-* flags' },
  { name: 'authorization-config', kind: 'string', help: 'AuthorizationConfiguration file (ordered Node, RBAC, Webhook, AlwaysAllow, AlwaysDeny authorizers); needs --feature-gates=StructuredAuthorizationConfiguration=true; excludes --authorization-mode' },
  { name: 'authorization-webhook-config-file', kind: 'string', help: 'kubeconfig-format file of the webhook --authorization-mode=...,Webhook asks (SubjectAccessReview)' },
  { name: 'authorization-webhook-cache-authorized-ttl', kind: 'duration', help: "how long the webhook's 'authorized' answers are cached", default: '5m' },
  { name: 'authorization-webhook-cache-unauthorized-ttl', kind: 'duration', help: "how long the webhook's 'unauthorized' answers are cached", default: '30s' },
  { name: 'authorization-webhook-version', kind: 'string', help: 'authorization.k8s.io version of the SubjectAccessReview sent to the webhook: v1 or v1beta1', default: 'v1beta1' },
  { name: 'oidc-issuer-url', kind: 'string', help: 'URL of the OpenID issuer (https only); tokens it signs authenticate' },
  { name: 'oidc-client-id', kind: 'string', help: 'the client ID tokens must be meant for (aud); needed with --oidc-issuer-url' },
  { name: 'oidc-ca-file', kind: 'string', help: 'CA certificates verifying the issuer\'s HTTPS endpoints (default: the system roots)' },
  { name: 'oidc-username-claim', kind: 'string', help: 'claim holding the user name', default: 'sub' },
  { name: 'oidc-username-prefix', kind: 'string', help: 'prefix of user names (default: issuer URL and "#" for claims other than email; "-" for none)' },
  { name: 'oidc-groups-claim', kind: 'string', help: 'claim holding the groups (a string or a list of strings)' },
  { name: 'oidc-groups-prefix', kind: 'string', help: 'prefix of group names' },
  { name: 'oidc-signing-algs', kind: 'string', help: `comma-separated accepted signing algorithms (${SIGNING_ALGORITHMS.join(', ')})`, default: 'RS256' },
  { name: 'oidc-required-claim', kind: 'string', help: 'key=value a token must carry; repeat the flag for several claims' }
]

const OIDC_FLAGS = AUTHN_CONFIG_FLAGS.map(f => f.name).filter(n => n.startsWith('oidc-'))

export interface LegacyOidcOptions {
  issuerUrl: string
  clientId: string
  caFile?: string
  usernameClaim: string
  usernamePrefix?: string
  groupsClaim?: string
  groupsPrefix?: string
  signingAlgs: string[]
  requiredClaims: Array<[string, string]>
}

export interface AuthnConfigOptions {
  authenticationConfigFile?: string
  legacyOidc?: LegacyOidcOptions
  authorizationConfigFile?: string
  /** The chain --authorization-mode stands for when it names Webhook (the --authorization-webhook-* flags). */
  authorizationConfig?: AuthorizationConfiguration
}

/** The flags named on the command line (`--x` or `--x=v`), as distinct from their defaults. */
export function givenFlags (argv: string[]): Set<string> {
  const out = new Set<string>()
  for (const a of argv) if (a.startsWith('--')) out.add(a.slice(2).split('=')[0])
  return out
}

/** Every value of a flag given several times (parseFlags keeps only the last). */
function repeated (argv: string[], name: string): string[] {
  const out: string[] = []
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === `--${name}` && i + 1 < argv.length) out.push(argv[++i])
    else if (argv[i].startsWith(`--${name}=`)) out.push(argv[i].slice(name.length + 3))
  }
  return out
}

const str = (v: unknown): string | undefined => typeof v === 'string' && v !== '' ? v : undefined

/**
 * Checks the flags' combinations (usage errors, exit 2, with kube-apiserver's wording). `argv` tells given flags
 * from defaults (and carries repeated --oidc-required-claim); `featureEnabled` is the server's feature gates.
 */
export function authnConfigOptions (flags: Flags, argv: string[], featureEnabled: (gate: string) => boolean): AuthnConfigOptions {
  const given = givenFlags(argv)
  const oidcSet = OIDC_FLAGS.some(f => given.has(f))
  const out: AuthnConfigOptions = {}
  const authnFile = str(flags['authentication-config'])
  if (authnFile !== undefined) {
    if (!featureEnabled('StructuredAuthenticationConfiguration')) throw new UsageError('set --feature-gates=StructuredAuthenticationConfiguration=true to use authentication-config file')
    if (oidcSet) throw new UsageError('authentication-config file and oidc-* flags are mutually exclusive')
    out.authenticationConfigFile = authnFile
  }
  const issuerUrl = str(flags['oidc-issuer-url'])
  const clientId = str(flags['oidc-client-id'])
  if ((issuerUrl === undefined) !== (clientId === undefined)) throw new UsageError('oidc-issuer-url and oidc-client-id should be specified together')
  if (issuerUrl !== undefined && clientId !== undefined) out.legacyOidc = legacyOidc(flags, argv, issuerUrl, clientId)
  const authzFile = str(flags['authorization-config'])
  if (authzFile !== undefined) {
    if (!featureEnabled('StructuredAuthorizationConfiguration')) throw new UsageError('--authorization-config cannot be used without enabling StructuredAuthorizationConfiguration feature flag')
    if (given.has('authorization-mode') || [...given].some(f => f.startsWith('authorization-webhook-'))) {
      throw new UsageError('--authorization-config can not be specified when --authorization-mode or --authorization-webhook-* flags are defined')
    }
    out.authorizationConfigFile = authzFile
  }
  const modes = String(flags['authorization-mode'] ?? '').split(',').map(m => m.trim()).filter(m => m !== '')
  if (authzFile === undefined && modes.includes('Webhook')) out.authorizationConfig = webhookModeConfiguration(flags, modes)
  return out
}

/**
 * `--authorization-mode` naming Webhook, as the AuthorizationConfiguration kube-apiserver builds from its legacy
 * flags: each mode in order, the webhook with the --authorization-webhook-* settings, a 30 s timeout, NoOpinion on
 * failure (the next authorizer decides), no match conditions.
 */
function webhookModeConfiguration (flags: Flags, modes: string[]): AuthorizationConfiguration {
  const file = str(flags['authorization-webhook-config-file'])
  if (file === undefined) throw new UsageError('authorization-mode Webhook\'s authorization config file not passed')
  const ms = (name: string, fallback: string): number => typeof flags[name] === 'number' ? flags[name] as number : parseDuration(name, String(flags[name] ?? fallback))
  const version = str(flags['authorization-webhook-version']) ?? 'v1beta1'
  return {
    authorizers: modes.map(type => type !== 'Webhook'
      ? { type, name: type.toLowerCase() }
      : {
          type,
          name: 'webhook',
          webhook: {
            authorizedTTL: ms('authorization-webhook-cache-authorized-ttl', '5m'),
            unauthorizedTTL: ms('authorization-webhook-cache-unauthorized-ttl', '30s'),
            timeout: 30_000,
            subjectAccessReviewVersion: version,
            matchConditionSubjectAccessReviewVersion: 'v1',
            failurePolicy: 'NoOpinion',
            connectionInfo: { type: 'KubeConfigFile', kubeConfigFile: file },
            matchConditions: []
          }
        })
  }
}

function legacyOidc (flags: Flags, argv: string[], issuerUrl: string, clientId: string): LegacyOidcOptions {
  const signingAlgs = String(flags['oidc-signing-algs'] ?? 'RS256').split(',').map(s => s.trim()).filter(s => s !== '')
  for (const alg of signingAlgs) if (!SIGNING_ALGORITHMS.includes(alg)) throw new UsageError(`oidc: unsupported signing alg: ${JSON.stringify(alg)}`)
  const requiredClaims = repeated(argv, 'oidc-required-claim').map((pair): [string, string] => {
    const eq = pair.indexOf('=')
    if (eq < 0) throw new UsageError(`invalid value "${pair}" for --oidc-required-claim: want key=value`)
    return [pair.slice(0, eq), pair.slice(eq + 1)]
  })
  return {
    issuerUrl,
    clientId,
    caFile: str(flags['oidc-ca-file']),
    usernameClaim: str(flags['oidc-username-claim']) ?? 'sub',
    usernamePrefix: str(flags['oidc-username-prefix']),
    groupsClaim: str(flags['oidc-groups-claim']),
    groupsPrefix: str(flags['oidc-groups-prefix']),
    signingAlgs,
    requiredClaims
  }
}

/** The one JWT authenticator the --oidc-* flags stand for (kube-apiserver's mapping, prefix rules included). */
export async function legacyOidcAuthenticator (o: LegacyOidcOptions): Promise<JWTAuthenticator> {
  let usernamePrefix = o.usernamePrefix ?? ''
  if (usernamePrefix === '' && o.usernameClaim !== 'email') usernamePrefix = o.issuerUrl + '#'
  if (o.usernamePrefix === '-') usernamePrefix = ''
  const a: JWTAuthenticator = {
    issuer: { url: o.issuerUrl, audiences: [o.clientId] },
    claimMappings: { username: { claim: o.usernameClaim, prefix: usernamePrefix } }
  }
  if (o.groupsClaim !== undefined) a.claimMappings.groups = { claim: o.groupsClaim, prefix: o.groupsPrefix ?? '' }
  if (o.caFile !== undefined) {
    try { a.issuer.certificateAuthority = await readFile(o.caFile, 'utf8') } catch (err) { throw new InvalidConfigurationError(`--oidc-ca-file: ${(err as Error).message}`) }
  }
  if (o.requiredClaims.length > 0) a.claimValidationRules = o.requiredClaims.map(([claim, requiredValue]) => ({ claim, requiredValue }))
  return a
}

/**
 * The JWT configuration the flags ask for (the file, or the --oidc-* flags), with the algorithms to accept;
 * undefined when neither is given. Throws InvalidConfigurationError for a file that cannot be read or decoded.
 */
export async function jwtConfiguration (o: AuthnConfigOptions): Promise<{ config: AuthenticationConfiguration; algorithms?: string[] } | undefined> {
  if (o.authenticationConfigFile !== undefined) return { config: await loadAuthenticationConfigFile(o.authenticationConfigFile) }
  if (o.legacyOidc !== undefined) return { config: { jwt: [await legacyOidcAuthenticator(o.legacyOidc)] }, algorithms: o.legacyOidc.signingAlgs }
  return undefined
}

export interface StructuredAuthOptions {
  options: AuthnConfigOptions
  /** Compiles and runs every CEL expression (the server's sandbox pool). */
  evaluator: ExpressionEvaluator
  /** --service-account-issuer values: no JWT authenticator may claim them. */
  serviceAccountIssuers: string[]
  /** Node and RBAC authorizers, made when --authorization-config names them. */
  authorizerFactories: AuthorizerFactories
  /** Webhook authorizer failures, for the server's log (e.g. `(name, msg) => logger.warn({ authorizer: name }, msg)`). */
  onWebhookError?: (authorizer: string, message: string) => void
  /** Issuers that could not be reached by the first fetch of their keys, which starts at once (they are tried again on need). */
  onIssuerError?: (message: string) => void
  /** Connection pools of authorization webhooks (the `controlplane` egress selection); direct by default. */
  webhookDispatcher?: ConfiguredAuthorizerOptions['dispatcher']
}

export interface StructuredAuth {
  /** The JWT authenticators, to append to the server's token authenticators (undefined without the flags). */
  jwt?: JwtAuthenticators
  /** The configured authorizer chain, replacing the --authorization-mode chain (undefined without --authorization-config). */
  authorizer?: ConfiguredAuthorizer
  close(): Promise<void>
}

/** Loads, validates and builds what the flags ask for; throws InvalidConfigurationError (exit 1) naming the bad field. */
export async function createStructuredAuth (o: StructuredAuthOptions): Promise<StructuredAuth> {
  const jwtConfig = await jwtConfiguration(o.options)
  const jwt = jwtConfig === undefined
    ? undefined
    : await createJwtAuthenticators(jwtConfig.config, { evaluator: o.evaluator, disallowedIssuers: o.serviceAccountIssuers, algorithms: jwtConfig.algorithms })
  let authorizer: ConfiguredAuthorizer | undefined
  try {
    const config = o.options.authorizationConfigFile !== undefined ? await loadAuthorizationConfigFile(o.options.authorizationConfigFile) : o.options.authorizationConfig
    if (config !== undefined) {
      authorizer = await buildConfiguredAuthorizer(config, { evaluator: o.evaluator, factories: o.authorizerFactories, onWebhookError: o.onWebhookError, dispatcher: o.webhookDispatcher })
    }
  } catch (err) {
    await jwt?.close()
    throw err
  }
  // As kube-apiserver, keys are fetched in the background from the start; a token arriving first waits for them.
  void jwt?.prefetch().then(errs => { for (const e of errs) o.onIssuerError?.(e) })
  return { jwt, authorizer, close: async () => { await Promise.all([jwt?.close(), authorizer?.close()]) } }
}
