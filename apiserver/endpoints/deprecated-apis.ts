// Requests to deprecated API versions: Kubernetes' `Warning: 299` header and a count for apiserver_requested_deprecated_apis.
//
// The audit annotation of the same requests is written by the audit step (audit.ts, from the definition's `deprecated`).
import type { IncomingMessage } from 'node:http'
import type { Registry } from '../registry/types.js'
import type { RequestInfo } from './request-info.js'
import { requestNotes } from './request-context.js'

/** One request to a deprecated API, as the metric labels it (`removedRelease` like "1.32", "" when unknown). */
export interface DeprecatedApiRequest {
  group: string
  version: string
  resource: string
  subresource: string
  removedRelease: string
}

/** Receives every request to a deprecated API (the metrics owner registers apiserver_requested_deprecated_apis on it). */
export interface DeprecatedApiRecorder {
  record(request: DeprecatedApiRequest): void
}

/** Warns about (and records) a request whose group/version/resource is deprecated; does nothing for others. */
export function noteDeprecatedApi (registry: Registry, req: IncomingMessage, info: RequestInfo, recorder?: DeprecatedApiRecorder): void {
  const def = (registry.handler(info.group, info.version, info.resource) ?? registry.creater(info.group, info.version, info.resource))?.definition
  const d = def?.deprecated
  if (d === undefined) return
  requestNotes(req).warnings.push(d.warning)
  recorder?.record({
    group: info.group, version: info.version, resource: info.resource, subresource: info.subresource, removedRelease: d.removedRelease ?? ''
  })
}
