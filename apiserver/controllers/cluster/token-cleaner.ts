// tokencleaner: deletes bootstrap token Secrets (kube-system, type bootstrap.kubernetes.io/token) once their
// `expiration` has passed, as kube-controller-manager's tokencleaner. It lists them by field selector on a period
// (and at the next expiry when sooner) rather than keeping every Secret of the cluster in an informer; an expired
// token is refused by the authenticator whether or not its Secret is gone yet.

import { QueueController, type ControllerContext, type ReconcileResult } from '../controller.js'
import { RESOURCES } from '../client/types.js'
import { BOOTSTRAP_TOKEN_NAMESPACE, BOOTSTRAP_TOKEN_SECRET_TYPE, tokenExpiry } from '../../auth/bootstrap-tokens.js'

const KEY = 'bootstrap-tokens'
export const TOKEN_CLEANER_PERIOD_MS = 60_000

export class TokenCleaner extends QueueController {
  constructor (c: ControllerContext, private readonly periodMs = TOKEN_CLEANER_PERIOD_MS) {
    super('tokencleaner', c)
  }

  protected watch (): void {
    this.queue.add(KEY)
  }

  async reconcile (): Promise<ReconcileResult> {
    const secrets = this.c.client.resource(RESOURCES.secrets)
    const list = await secrets.list(BOOTSTRAP_TOKEN_NAMESPACE, { fieldSelector: `type=${BOOTSTRAP_TOKEN_SECRET_TYPE}` })
    let next = this.periodMs
    for (const s of list.items) {
      if (s.metadata?.deletionTimestamp !== undefined) continue
      const { expired, remainingMs } = tokenExpiry(s, this.c.clock.now())
      if (!expired) {
        if (remainingMs !== undefined) next = Math.min(next, remainingMs + 1)
        continue
      }
      this.c.logger.info({ secret: s.metadata.name }, 'deleting expired bootstrap token')
      try {
        await secrets.delete(BOOTSTRAP_TOKEN_NAMESPACE, String(s.metadata.name), { preconditions: { uid: s.metadata.uid } })
      } catch (err) {
        const code = (err as { code?: number }).code
        if (code !== 404 && code !== 409) throw err
      }
    }
    return { requeueAfterMs: next }
  }
}
