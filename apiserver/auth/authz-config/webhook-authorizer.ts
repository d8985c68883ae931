// A Webhook authorizer of an AuthorizationConfiguration: match conditions, SubjectAccessReview over HTTPS, TTL cache, failure policy.
//
// Contract (as kube-apiserver's webhook authorizer): match conditions run first, in the sandbox, over `request`
// (the v1 SubjectAccessReview spec); all must be true for the webhook to be asked, one false means no opinion, an
// error follows the failure policy. Answers are cached by request (allowed for authorizedTTL, anything else for
// unauthorizedTTL); failures (transport, timeout, non-2xx, malformed answer) are not cached and follow the
// failure policy: NoOpinion lets the next authorizer decide, Deny refuses. As in Kubernetes the failure is not
// shown to the client (the reason stays empty): it goes to onError, for the server's log.

import type { PooledProgram } from '../../../sandbox/expression-evaluator.js'
import type { Attributes, AuthorizationResult, Authorizer } from '../types.js'
import type { WebhookConfiguration } from './config.js'
import { sarBody, sarSpec, sarStatus, type SarSpec, type SarStatus } from './subject-access-review.js'
import { WebhookStatusError, type WebhookClient } from './webhook-client.js'

/** Retries of a failed request (kube-apiserver's DefaultAuthWebhookRetryBackoff: 500 ms, x1.5, 20 % jitter, 5 tries). */
export interface RetryBackoff { initialMs: number; factor: number; jitter: number; steps: number }
export const DEFAULT_RETRY_BACKOFF: RetryBackoff = { initialMs: 500, factor: 1.5, jitter: 0.2, steps: 5 }

/** As Kubernetes' DefaultShouldRetry: 429, 5xx and reset connections are worth another try; timeouts are not. */
function retriable (err: unknown): boolean {
  if (err instanceof WebhookStatusError) return err.statusCode === 429 || err.statusCode >= 500
  return (err as { code?: string }).code === 'ECONNRESET'
}

export interface WebhookAuthorizerOptions {
  name: string
  config: WebhookConfiguration
  client: WebhookClient
  /** The compiled match conditions, in order. */
  matchConditions: PooledProgram[]
  /** Told every failure (transport, timeout, malformed answer, match condition error), for the log. */
  onError?: (authorizer: string, message: string) => void
  /** Retries of 429/5xx answers and reset connections (default DEFAULT_RETRY_BACKOFF; steps 1 = no retry). */
  retryBackoff?: RetryBackoff
  /** Most cached answers (default 10,000; the oldest go first). */
  cacheSize?: number
  now?: () => number
}

export interface WebhookAuthorizer extends Authorizer {
  /** Requests actually sent to the webhook (observability, tests). */
  calls(): number
  close(): Promise<void>
}

export function createWebhookAuthorizer (o: WebhookAuthorizerOptions): WebhookAuthorizer {
  const now = o.now ?? Date.now
  const maxEntries = o.cacheSize ?? 10_000
  const cache = new Map<string, { status: SarStatus; expires: number }>()
  const version = o.config.subjectAccessReviewVersion
  const backoff = o.retryBackoff ?? DEFAULT_RETRY_BACKOFF
  let sent = 0

  async function post (body: unknown): Promise<unknown> {
    let delay = backoff.initialMs
    for (let attempt = 1; ; attempt++) {
      try {
        sent++
        return await o.client.post(body, o.config.timeout)
      } catch (err) {
        if (attempt >= backoff.steps || !retriable(err)) throw err
        await new Promise(resolve => setTimeout(resolve, delay * (1 + backoff.jitter * Math.random())))
        delay *= backoff.factor
      }
    }
  }

  function onError (why: string): AuthorizationResult {
    o.onError?.(o.name, why)
    return { decision: o.config.failurePolicy === 'Deny' ? 'deny' : 'noOpinion', reason: '' }
  }

  /** true: all conditions hold; false: one does not; string: an evaluation error. */
  async function matches (spec: SarSpec): Promise<boolean | string> {
    for (const p of o.matchConditions) {
      try {
        const { value } = await p.evaluate({ request: spec })
        if (typeof value !== 'boolean') return `match condition ${JSON.stringify(p.expression)} did not evaluate to a boolean`
        if (!value) return false
      } catch (err) {
        return `match condition ${JSON.stringify(p.expression)}: ${(err as Error).message}`
      }
    }
    return true
  }

  function remember (key: string, status: SarStatus): void {
    const ttl = status.allowed ? o.config.authorizedTTL : o.config.unauthorizedTTL
    cache.delete(key)
    cache.set(key, { status, expires: now() + ttl })
    while (cache.size > maxEntries) cache.delete(cache.keys().next().value as string)
  }

  function decide (s: SarStatus): AuthorizationResult {
    if (s.allowed && s.denied) return onError('the webhook answered both allowed and denied')
    if (s.denied) return { decision: 'deny', reason: s.reason }
    if (s.allowed) return { decision: 'allow', reason: s.reason }
    return { decision: 'noOpinion', reason: s.reason }
  }

  return {
    async authorize (a: Attributes) {
      const spec = sarSpec(a)
      const m = await matches(spec)
      if (typeof m === 'string') return onError(m)
      if (!m) return { decision: 'noOpinion', reason: '' }
      const key = JSON.stringify(spec)
      const hit = cache.get(key)
      if (hit !== undefined && hit.expires > now()) return decide(hit.status)
      let status: SarStatus
      try {
        status = sarStatus(await post(sarBody(spec, version)), version)
      } catch (err) {
        const e = err as Error & { code?: string }
        const timedOut = e.name === 'TimeoutError' || e.name === 'AbortError' || e.code === 'UND_ERR_HEADERS_TIMEOUT' || e.code === 'UND_ERR_BODY_TIMEOUT'
        return onError(timedOut ? `the webhook did not answer within ${o.config.timeout}ms` : e.message)
      }
      if (!(status.allowed && status.denied)) remember(key, status)
      return decide(status)
    },
    calls: () => sent,
    async close () {
      for (const p of o.matchConditions) p.release()
      await o.client.close()
    }
  }
}
