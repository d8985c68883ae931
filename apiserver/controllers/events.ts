// Events controllers write about the objects they act on (core/v1 Events), with repeats folded into a count.

import type { ControllerClock } from './clock.js'
import { RESOURCES, type ApiClient, type Obj } from './client/types.js'
import type { Logger } from '../registry/core.js'
import { rfc3339 } from '../registry/object-meta.js'

export interface EventRecorder {
  /** `type` Normal or Warning; never throws (an Event that cannot be written is logged). */
  event(object: Obj, type: 'Normal' | 'Warning', reason: string, message: string): void
}


/** Repeats of the same (object, reason, message) within this window update one Event's count. */
const FOLD_MS = 10 * 60_000

export function apiEventRecorder (client: ApiClient, component: string, clock: ControllerClock, logger: Logger): EventRecorder {
  const events = client.resource(RESOURCES.events)
  const recent = new Map<string, { name: string, namespace: string, count: number, first: string, at: number }>()
  let seq = 0
  return {
    event (object, type, reason, message) {
      const meta = object.metadata ?? {}
      const namespace = String(meta.namespace ?? '') === '' ? 'default' : String(meta.namespace)
      const now = clock.now()
      const fold = `${String(meta.uid)}|${reason}|${message}`
      const prior = recent.get(fold)
      const write = async (): Promise<void> => {
        if (prior !== undefined && now - prior.at < FOLD_MS) {
          prior.count++
          prior.at = now
          await events.patch(prior.namespace, prior.name, { count: prior.count, lastTimestamp: rfc3339(now) })
          return
        }
        const name = `${String(meta.name)}.${(now * 1000 + (seq++ % 1000)).toString(16)}`
        if (recent.size > 4096) recent.clear()
        recent.set(fold, { name, namespace, count: 1, first: rfc3339(now), at: now })
        const apiVersion = String(object.apiVersion ?? '')
        await events.create(namespace, {
          apiVersion: 'v1',
          kind: 'Event',
          metadata: { name, namespace },
          involvedObject: {
            apiVersion, kind: object.kind, name: meta.name, namespace: meta.namespace, uid: meta.uid, resourceVersion: meta.resourceVersion
          },
          reason,
          message,
          type,
          count: 1,
          firstTimestamp: rfc3339(now),
          lastTimestamp: rfc3339(now),
          source: { component },
          reportingComponent: component,
          reportingInstance: ''
        })
      }
      write().catch(err => { logger.debug({ err, reason }, 'event not recorded') })
    }
  }
}
