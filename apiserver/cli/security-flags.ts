// The security flags of `orch up` / `orch apiserver` (TLS, authentication, authorization), parsed and checked before serving.

import { parseAuthorizationModes, type AuthorizationMode } from '../auth/authorizer.js'
import { tlsTuning, type TlsTuning } from '../pki/tls-options.js'
import { parseDuration, UsageError, type FlagSpec, type Flags } from './args.js'

export const DEFAULT_ISSUER = 'https://kubernetes.default.svc.cluster.local'

export const SECURITY_FLAGS: FlagSpec[] = [
  { name: 'tls-cert-file', kind: 'string', help: 'serving certificate (PEM, may hold the chain); default: one issued by the generated CA in DIR/pki' },
  { name: 'tls-private-key-file', kind: 'string', help: 'private key of --tls-cert-file' },
  { name: 'client-ca-file', kind: 'string', help: 'client certificates signed by these CAs authenticate (CN user, O groups), besides the generated CA' },
  { name: 'tls-min-version', kind: 'string', help: 'VersionTLS12 or VersionTLS13', default: 'VersionTLS12' },
  { name: 'tls-cipher-suites', kind: 'string', help: 'comma-separated cipher suites (Go names) for TLS 1.2' },
  { name: 'anonymous-auth', kind: 'bool', help: 'requests without credentials are system:anonymous (reaching only what RBAC grants system:unauthenticated)', default: true },
  { name: 'enable-bootstrap-token-auth', kind: 'bool', help: 'bootstrap tokens (Secrets of type bootstrap.kubernetes.io/token in kube-system, `orch admin token create`) authenticate, for orchlets joining', default: true },
  { name: 'token-auth-file', kind: 'string', help: 'static bearer tokens: CSV lines token,user,uid,"group1,group2"' },
  { name: 'service-account-issuer', kind: 'string', help: 'issuer of service-account tokens (comma-separated: the first signs, all are accepted)', default: DEFAULT_ISSUER },
  { name: 'api-audiences', kind: 'string', help: 'comma-separated audiences tokens must be meant for (default: the issuer)' },
  { name: 'service-account-key-file', kind: 'string', help: 'comma-separated PEM keys that verify service-account tokens, besides the signing key' },
  { name: 'service-account-signing-key-file', kind: 'string', help: 'PEM private key signing service-account tokens (default: generated in DIR/pki/sa.key)' },
  { name: 'service-account-max-token-expiration', kind: 'duration', help: 'longest lifetime of a requested token; 0 for no limit', default: '0s' },
  { name: 'authorization-mode', kind: 'string', help: 'ordered authorizers: AlwaysAllow, AlwaysDeny, Node, RBAC', default: 'Node,RBAC' }
]

export interface SecurityOptions {
  tlsCertFile?: string
  tlsPrivateKeyFile?: string
  clientCaFile?: string
  tls: TlsTuning
  anonymousAuth: boolean
  bootstrapTokenAuth: boolean
  tokenAuthFile?: string
  serviceAccountIssuers: string[]
  apiAudiences: string[]
  serviceAccountKeyFiles: string[]
  serviceAccountSigningKeyFile?: string
  /** Seconds; 0 = no limit. */
  maxTokenExpirationSeconds: number
  authorizationModes: AuthorizationMode[]
}

const list = (v: unknown): string[] => typeof v === 'string' ? v.split(',').map(s => s.trim()).filter(s => s !== '') : []
const str = (v: unknown): string | undefined => typeof v === 'string' && v !== '' ? v : undefined

/** Every rule that can be checked without touching files; violations are usage errors (exit 2). */
export function securityOptions (flags: Flags): SecurityOptions {
  const durationMs = (name: string): number => { const v = flags[name]; return typeof v === 'number' ? v : parseDuration(name, String(v ?? '0s')) }
  try {
    const issuers = list(flags['service-account-issuer'])
    if (issuers.length === 0) throw new Error('--service-account-issuer: at least one issuer is required')
    const cert = str(flags['tls-cert-file'])
    const key = str(flags['tls-private-key-file'])
    if ((cert === undefined) !== (key === undefined)) throw new Error('--tls-cert-file and --tls-private-key-file must be given together')
    const audiences = list(flags['api-audiences'])
    return {
      tlsCertFile: cert,
      tlsPrivateKeyFile: key,
      clientCaFile: str(flags['client-ca-file']),
      tls: tlsTuning(str(flags['tls-min-version']), str(flags['tls-cipher-suites'])),
      anonymousAuth: flags['anonymous-auth'] !== false,
      bootstrapTokenAuth: flags['enable-bootstrap-token-auth'] !== false,
      tokenAuthFile: str(flags['token-auth-file']),
      serviceAccountIssuers: issuers,
      apiAudiences: audiences.length > 0 ? audiences : issuers,
      serviceAccountKeyFiles: list(flags['service-account-key-file']),
      serviceAccountSigningKeyFile: str(flags['service-account-signing-key-file']),
      maxTokenExpirationSeconds: Math.floor(durationMs('service-account-max-token-expiration') / 1000),
      authorizationModes: parseAuthorizationModes(String(flags['authorization-mode'] ?? 'Node,RBAC'))
    }
  } catch (err) {
    throw new UsageError((err as Error).message)
  }
}
