// An object's identity through the registry (uid, deletion): what bound service-account tokens are checked against.

import type { UidLookup } from '../auth/service-account-tokens.js'
import { isStatusError } from '../errors/status-error.js'
import { internalContext } from './internal-context.js'
import { parseJson, type Obj } from './object-meta.js'
import type { Registry, RequestContext, ResourceHandler } from './types.js'

/** kube-apiserver keeps a token good for this long after its object's deletionTimestamp (a pod shutting down still talks). */
export const DELETED_GRACE_MS = 60_000

/** The object's served form; throws the handler's StatusError (404 when missing). */
export async function readObject (handler: ResourceHandler, ctx: RequestContext, namespace: string, name: string): Promise<Obj> {
  const got = await handler.get(ctx, namespace, name, {})
  return Buffer.isBuffer(got) ? parseJson(got) : got.object
}

/**
 * A UidLookup (auth/service-account-tokens.ts) over the registry's core/v1 service accounts, pods and secrets. An
 * object whose deletionTimestamp passed more than DELETED_GRACE_MS ago counts as gone, as Kubernetes' token
 * validator judges it. `registry` is a getter so the token authenticator can be built before the registry.
 */
export function registryUidLookup (registry: () => Pick<Registry, 'handler'>, now: () => number): UidLookup {
  const ctx = internalContext('system:apiserver')
  return async (resource, namespace, name) => {
    const handler = registry().handler('', 'v1', resource)
    if (handler === undefined) return undefined
    let obj: Obj
    try {
      obj = await readObject(handler, ctx, namespace, name)
    } catch (err) {
      if (isStatusError(err) && err.code === 404) return undefined
      throw err
    }
    const meta = (obj.metadata ?? {}) as Obj
    if (typeof meta.deletionTimestamp === 'string' && Date.parse(meta.deletionTimestamp) < now() - DELETED_GRACE_MS) return undefined
    return typeof meta.uid === 'string' ? meta.uid : undefined
  }
}
