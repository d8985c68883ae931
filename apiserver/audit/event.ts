// The audit event (`audit.orch.io/v1` Event): its JSON shape, timestamps, source IPs, and what the policy trims from it.

import type { IncomingMessage } from 'node:http'
import type { UserInfo } from '../auth/types.js'
import type { Level, Stage } from './policy.js'

export const EVENT_API_VERSION = 'audit.orch.io/v1'
/** What `--audit-log-version` may name: orch's group, or Kubernetes' for tools that read kube-apiserver's logs. */
export const EVENT_API_VERSIONS = [EVENT_API_VERSION, 'audit.k8s.io/v1']

export interface ObjectReference {
  resource: string
  namespace?: string
  name?: string
  uid?: string
  apiGroup?: string
  apiVersion?: string
  resourceVersion?: string
  subresource?: string
}

/** metav1.Status as an audit event carries it: the code always, the rest for error responses. */
export interface ResponseStatus {
  metadata: Record<string, never>
  status?: string
  message?: string
  reason?: string
  details?: unknown
  code: number
}

/** authentication/v1 UserInfo as events carry it: empty parts are left out (a failed authentication has none). */
export interface EventUser { username?: string; uid?: string; groups?: string[]; extra?: Record<string, string[]> }

/** Field order is Kubernetes' (audit.k8s.io/v1 Event), so lines read the same. */
export interface AuditEvent {
  kind: 'Event'
  apiVersion: string
  level: Level
  auditID: string
  stage: Stage
  requestURI: string
  verb: string
  user: EventUser
  impersonatedUser?: EventUser
  sourceIPs?: string[]
  userAgent?: string
  objectRef?: ObjectReference
  responseStatus?: ResponseStatus
  requestObject?: unknown
  responseObject?: unknown
  requestReceivedTimestamp: string
  stageTimestamp: string
  annotations?: Record<string, string>
}

/** RFC 3339 with microseconds (metav1.MicroTime): `2026-11-25T09:00:00.123456Z`; `ms` may carry a fraction. */
export function microTime (ms: number): string {
  const whole = Math.floor(ms)
  const micros = Math.min(999, Math.floor((ms - whole) * 1000))
  const iso = new Date(whole).toISOString() // 2026-11-25T09:00:00.123Z
  return `${iso.slice(0, 23)}${String(micros).padStart(3, '0')}Z`
}

const firstIp = (v: string): string => v.trim()

/** Kubernetes' SourceIPs: X-Forwarded-For entries, then X-Real-Ip, then the peer address, each once. */
export function sourceIPs (req: IncomingMessage): string[] {
  const out: string[] = []
  const fwd = req.headers['x-forwarded-for']
  for (const v of (typeof fwd === 'string' ? fwd : '').split(',').map(firstIp)) if (v !== '' && !out.includes(v)) out.push(v)
  const real = req.headers['x-real-ip']
  if (typeof real === 'string' && real.trim() !== '' && !out.includes(real.trim())) out.push(real.trim())
  let peer = req.socket?.remoteAddress ?? ''
  if (peer.startsWith('::ffff:')) peer = peer.slice(7)
  if (peer !== '' && out[out.length - 1] !== peer) out.push(peer)
  return out
}

/** The user as an event carries it (username, uid, groups, extra; empty parts left out). */
export function eventUser (u: UserInfo): EventUser {
  const out: EventUser = {}
  if (u.username !== '') out.username = u.username
  if (u.uid !== undefined && u.uid !== '') out.uid = u.uid
  if (u.groups !== undefined && u.groups.length > 0) out.groups = [...u.groups]
  if (u.extra !== undefined && Object.keys(u.extra).length > 0) out.extra = u.extra
  return out
}

type Obj = Record<string, unknown>
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v)

function stripOne (o: unknown): unknown {
  if (!isObj(o) || !isObj(o.metadata) || !('managedFields' in o.metadata)) return o
  const { managedFields: _, ...metadata } = o.metadata
  return { ...o, metadata }
}

/** `omitManagedFields`: the object, or every item of a list, without metadata.managedFields (copies; the input is kept). */
export function withoutManagedFields (o: unknown): unknown {
  if (isObj(o) && Array.isArray(o.items)) return { ...o, items: o.items.map(stripOne) }
  return stripOne(o)
}

/** One JSON line of the log backend. */
export function eventLine (e: AuditEvent): string {
  return JSON.stringify(e) + '\n'
}
