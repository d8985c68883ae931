// Tracing decorators for the lifecycle steps: authentication, authorization, admission and storage calls become child
// spans of the request's span. Applied by the composition (orch up) only when tracing is configured.

import type { Authenticator } from '../auth/authenticator.js'
import type { Authorizer } from '../auth/types.js'
import type { MutatingAdmission, WriteAdmission } from '../registry/admission.js'
import type { Store } from '../storage/store.js'
import type { Tracing } from './tracing.js'

type Step = Pick<Tracing, 'step'>

export function tracedAuthenticator (a: Authenticator, tracing: Step): Authenticator {
  return {
    authenticate: async req => await tracing.step('authentication', async () => await a.authenticate(req)),
    authenticateToken: async (token, audiences) => await a.authenticateToken(token, audiences)
  }
}

export function tracedAuthorizer (a: Authorizer, tracing: Step): Authorizer {
  return { authorize: async attrs => await tracing.step('authorization', async () => await a.authorize(attrs), { verb: attrs.verb }) }
}

/** The plugins of one phase as one step (they run in order, as the registry runs them). */
export function tracedAdmission<T extends WriteAdmission | MutatingAdmission> (phase: 'mutating' | 'validating', plugins: T[], tracing: Step): T[] {
  if (plugins.length === 0) return plugins
  const whole = {
    admit: async (a: Parameters<T['admit']>[0]) => {
      await tracing.step(`admission.${phase}`, async () => { for (const p of plugins) await p.admit(a) }, { operation: a.operation })
    }
  }
  return [whole as T]
}

/** The traced calls and the operation each is recorded as (a joined page is a list read, as in the storage metrics). */
const STORAGE_CALLS = new Map<PropertyKey, string>([['get', 'get'], ['list', 'list'], ['listJoined', 'list'], ['count', 'count'],
  ['create', 'create'], ['update', 'update'], ['delete', 'delete']])

/** The store with its reads and writes traced as `storage` spans; every other member is the store's own. */
export function tracedStore (store: Store, tracing: Step): Store {
  return new Proxy(store, {
    get (target, prop) {
      const value: unknown = Reflect.get(target, prop, target)
      if (typeof value !== 'function') return value
      const bound = (value as (...args: unknown[]) => unknown).bind(target)
      const operation = STORAGE_CALLS.get(prop)
      if (operation === undefined) return bound
      return async (...args: unknown[]) => await tracing.step('storage', async () => await bound(...args), { operation, key: String(args[0]) })
    }
  })
}
