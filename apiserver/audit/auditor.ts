// The auditor: the policy, the sink, the clock and the ID source that the audit wrappers share (one per API server).

import { randomUUID } from 'node:crypto'
import type { Attributes } from '../auth/types.js'
import { PolicyEvaluator, type RequestAuditConfig } from './policy-rules.js'
import type { AuditSink } from './log-backend.js'
import type { Policy } from './policy.js'
import { EVENT_API_VERSION, type AuditEvent } from './event.js'

/** A served API version Kubernetes calls deprecated; its requests carry `orch.io/deprecated: "true"`. */
export interface DeprecatedApi {
  /** `1.32`: becomes the `orch.io/removed-release` annotation. */
  removedRelease?: string
}

export interface AuditorOptions {
  policy: Policy
  sink: AuditSink
  /** Milliseconds since the epoch, fractions kept for microsecond timestamps. */
  now?: () => number
  /** A new audit ID (default: a random UUID). */
  newId?: () => string
  /** Whether a group/version/resource is deprecated (e.g. a CRD version marked `deprecated: true`). */
  deprecatedApi?: (group: string, version: string, resource: string) => DeprecatedApi | undefined
  /** The events' apiVersion (default audit.orch.io/v1; audit.k8s.io/v1 for Kubernetes tooling). */
  eventApiVersion?: string
  /** Largest response body kept for `responseObject` (bytes, default 16 MiB); bigger ones are logged without it. */
  maxCapturedBytes?: number
}

const defaultNow = (): number => performance.timeOrigin + performance.now()

export class Auditor {
  readonly now: () => number
  readonly newId: () => string
  readonly maxCapturedBytes: number
  readonly eventApiVersion: string
  private readonly evaluator: PolicyEvaluator

  constructor (private readonly opts: AuditorOptions) {
    this.evaluator = new PolicyEvaluator(opts.policy)
    this.now = opts.now ?? defaultNow
    this.newId = opts.newId ?? randomUUID
    this.maxCapturedBytes = opts.maxCapturedBytes ?? 16 * 1024 * 1024
    this.eventApiVersion = opts.eventApiVersion ?? EVENT_API_VERSION
  }

  evaluate (attrs: Attributes): RequestAuditConfig {
    return this.evaluator.evaluate(attrs)
  }

  deprecated (group: string, version: string, resource: string): DeprecatedApi | undefined {
    return this.opts.deprecatedApi?.(group, version, resource)
  }

  emit (event: AuditEvent): void {
    this.opts.sink.write(event)
  }

  /** Flushes and closes the sink (server shutdown). */
  async close (): Promise<void> {
    await this.opts.sink.close()
  }
}
