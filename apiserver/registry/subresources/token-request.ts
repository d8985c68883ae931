// serviceaccounts/{name}/token: issues a bound service-account token (TokenRequest), as kube-apiserver's TokenREST.

import { badRequest, conflict, invalid, type StatusCause } from '../../errors/status-error.js'
import type { BoundObject, TokenClaimsRequest } from '../../auth/service-account-tokens.js'
import { readObject } from '../object-uids.js'
import { rfc3339, type Obj } from '../object-meta.js'
import type { DecodedObject, RequestContext, ResourceHandler, SubresourceCreater, SubresourceResult } from '../types.js'

/** Signs service-account tokens (auth/service-account-tokens.ts ServiceAccountTokens). */
export interface TokenIssuer {
  issue(r: TokenClaimsRequest): Promise<{ token: string; expiresAt: number }>
}

export interface TokenRequestOptions {
  serviceAccounts: ResourceHandler
  pods: ResourceHandler
  secrets: ResourceHandler
  issuer: TokenIssuer
  /** --api-audiences: the audiences of a request that names none. */
  apiAudiences: string[]
  /** --service-account-max-token-expiration in seconds; 0 or absent: no cap. */
  maxExpirationSeconds?: number
  now: () => number
}

export const DEFAULT_EXPIRATION_SECONDS = 3600
const MIN_EXPIRATION_SECONDS = 600
const MAX_EXPIRATION_SECONDS = 2 ** 32

/** kube-apiserver's ValidateTokenRequest. */
function expirationErrors (seconds: unknown): StatusCause[] {
  const bad = (why: string): StatusCause[] => [{ reason: 'FieldValueInvalid', field: 'spec.expirationSeconds', message: `Invalid value: ${String(seconds)}: ${why}` }]
  if (typeof seconds !== 'number' || !Number.isInteger(seconds)) return bad('must be an integer')
  if (seconds < MIN_EXPIRATION_SECONDS) return bad('may not specify a duration less than 10 minutes')
  if (seconds > MAX_EXPIRATION_SECONDS) return bad('may not specify a duration larger than 2^32 seconds')
  return []
}

const groupOf = (apiVersion: string): string => apiVersion.includes('/') ? apiVersion.split('/')[0] : ''

/** The Pod or Secret `ref` names, checked as kube-apiserver does (same service account, same uid when one is given). */
async function boundObject (o: TokenRequestOptions, ctx: RequestContext, namespace: string, account: string, ref: Obj): Promise<BoundObject> {
  const apiVersion = typeof ref.apiVersion === 'string' ? ref.apiVersion : ''
  const kind = typeof ref.kind === 'string' ? ref.kind : ''
  const name = typeof ref.name === 'string' ? ref.name : ''
  const group = groupOf(apiVersion)
  if (group !== '' || (kind !== 'Pod' && kind !== 'Secret')) {
    const version = apiVersion.includes('/') ? apiVersion.split('/')[1] : apiVersion
    throw badRequest(`cannot bind token to object of type ${group}/${version}, Kind=${kind}`)
  }
  const obj = await readObject(kind === 'Pod' ? o.pods : o.secrets, ctx, namespace, name)
  if (kind === 'Pod' && ((obj.spec ?? {}) as Obj).serviceAccountName !== account) {
    throw badRequest(`cannot bind token for serviceaccount "${account}" to pod running with different serviceaccount name.`)
  }
  const uid = String((obj.metadata as Obj).uid)
  if (typeof ref.uid === 'string' && ref.uid !== '' && ref.uid !== uid) {
    throw conflict({ group: '', resource: kind }, name,
      `the UID in the bound object reference (${ref.uid}) does not match the UID in record. The object might have been deleted and then recreated`)
  }
  return { kind, name, uid }
}

/** POST serviceaccounts/{name}/token: a token for the account, valid for spec.audiences for spec.expirationSeconds. */
export function createTokenRequestSubresource (o: TokenRequestOptions): SubresourceCreater {
  return {
    requestKind: { apiVersions: ['authentication.orch.io/v1', 'authentication.k8s.io/v1'], kind: 'TokenRequest' },
    async create (ctx: RequestContext, namespace: string, name: string, body: DecodedObject): Promise<SubresourceResult> {
      const req = body.object
      const apiVersion = String(req.apiVersion)
      const account = await readObject(o.serviceAccounts, ctx, namespace, name)
      const spec = { ...((req.spec ?? {}) as Obj) }
      if (!Array.isArray(spec.audiences) || spec.audiences.length === 0) spec.audiences = [...o.apiAudiences]
      spec.expirationSeconds ??= DEFAULT_EXPIRATION_SECONDS
      const now = o.now()
      const errs = expirationErrors(spec.expirationSeconds)
      if (errs.length > 0) throw invalid(groupOf(apiVersion), 'TokenRequest', '', errs)
      const ref = spec.boundObjectRef as Obj | undefined | null
      const bound = ref === undefined || ref === null ? undefined : await boundObject(o, ctx, namespace, name, ref)
      let seconds = spec.expirationSeconds as number
      const max = o.maxExpirationSeconds ?? 0
      if (max > 0 && seconds > max) {
        ctx.warnings.push(`requested expiration of ${seconds} seconds shortened to ${max} seconds`)
        seconds = spec.expirationSeconds = max
      }
      const meta = (account.metadata ?? {}) as Obj
      const { token } = await o.issuer.issue({
        namespace, serviceAccount: { name, uid: String(meta.uid) }, audiences: (spec.audiences as unknown[]).map(String),
        expirationSeconds: seconds, boundObject: bound, now
      })
      const object: Obj = {
        apiVersion, kind: 'TokenRequest',
        metadata: { ...((req.metadata ?? {}) as Obj), name, namespace, creationTimestamp: rfc3339(now) },
        spec,
        status: { token, expirationTimestamp: rfc3339(now + seconds * 1000) }
      }
      return { status: 201, object }
    }
  }
}
