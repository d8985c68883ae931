// The audit steps (Kubernetes' WithAuditInit, WithFailedAuthenticationAudit and WithAudit): an audit ID for every
// request, and events at the stages and level the audit policy gives, written through the auditor's sink.

import type { IncomingMessage, ServerResponse } from 'node:http'
import type { TLSSocket } from 'node:tls'
import { isStatusError, type StatusError } from '../errors/status-error.js'
import type { Attributes, UserInfo } from '../auth/types.js'
import type { Auditor, DeprecatedApi } from '../audit/auditor.js'
import type { Registry } from '../registry/types.js'
import { eventUser, microTime, sourceIPs, withoutManagedFields, type AuditEvent, type ObjectReference, type ResponseStatus } from '../audit/event.js'
import type { Level, Stage } from '../audit/policy.js'
import type { RequestAuditConfig } from '../audit/policy-rules.js'
import { requestAttributes } from './authorization.js'
import { copyRequestBody, copyResponseBody, decodeCopy, type BodyCopy } from './audit-capture.js'
import { Messages } from './protobuf/messages.js'
import type { AuditAnnotations, RequestHandler, RequestTarget } from './request-limits.js'
import { requestNotes } from './request-context.js'

/** The response header carrying the audit ID (a request may bring its own, which is then kept). */
export const AUDIT_ID_HEADER = 'Audit-Id'

const RANK: Record<Level, number> = { None: 0, Metadata: 1, Request: 2, RequestResponse: 3 }
const atLeast = (l: Level, min: Level): boolean => RANK[l] >= RANK[min]

/** The request's audit ID: the one given by an outer step, the client's `Audit-Id`, or a new one; set on the response. */
function assignAuditID (auditor: Auditor, req: IncomingMessage, res: ServerResponse, target: RequestTarget): string {
  if (target.auditID === undefined) {
    const given = req.headers['audit-id']
    target.auditID = typeof given === 'string' && /^[\x21-\x7e]{1,128}$/.test(given) ? given : auditor.newId()
    if (!res.headersSent) res.setHeader(AUDIT_ID_HEADER, target.auditID)
  }
  return target.auditID
}

function objectRefOf (a: Attributes): ObjectReference | undefined {
  if (!a.resourceRequest) return undefined
  const ref: ObjectReference = { resource: a.resource }
  if (a.namespace !== '') ref.namespace = a.namespace
  if (a.name !== '') ref.name = a.name
  if (a.apiGroup !== '') ref.apiGroup = a.apiGroup
  if (a.apiVersion !== '') ref.apiVersion = a.apiVersion
  if (a.subresource !== '') ref.subresource = a.subresource
  return ref
}

/** metav1.Status fields an event keeps of an error (Kubernetes' LogResponseObject). */
function errorStatus (err: StatusError): Omit<ResponseStatus, 'code'> {
  const s: Omit<ResponseStatus, 'code'> = { metadata: {}, status: 'Failure', message: err.message, reason: err.reason }
  if (err.details !== undefined) s.details = err.details
  return s
}

type Obj = Record<string, unknown>
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v)

/** Who asked what: the parts of an event known when the request arrives. */
interface AuditedRequest {
  auditID: string
  req: IncomingMessage
  attrs: Attributes
  /** The authenticated user (before impersonation). */
  user: UserInfo
  /** Decodes protobuf request bodies for requestObject. */
  messages?: Messages
  /** When the request arrived (default: now). */
  received?: number
}

/** What a stage adds to the request's event. */
interface StageParts { status?: ResponseStatus; requestObject?: unknown; responseObject?: unknown; user?: UserInfo; at?: number }

/** One audited request: its event fields so far, its annotations, and the stages it still has to emit. */
class RequestAudit implements AuditAnnotations {
  private readonly annotations = new Map<string, string>()
  private readonly received: number
  private readonly base: Pick<AuditEvent, 'requestURI' | 'verb' | 'user' | 'sourceIPs' | 'userAgent' | 'objectRef'>
  private error: Omit<ResponseStatus, 'code'> | undefined
  private started = false
  private done = false
  requestCopy: BodyCopy | undefined
  responseCopy: BodyCopy | undefined

  private readonly auditID: string
  private readonly user: UserInfo
  private readonly messages: Messages | undefined

  constructor (private readonly auditor: Auditor, private readonly config: RequestAuditConfig, init: AuditedRequest) {
    const { req, attrs, user } = init
    this.auditID = init.auditID
    this.user = user
    this.messages = init.messages
    this.received = init.received ?? auditor.now()
    const ua = req.headers['user-agent']
    this.base = { requestURI: req.url ?? '/', verb: attrs.verb, user: eventUser(user), sourceIPs: sourceIPs(req), objectRef: objectRefOf(attrs) }
    if (typeof ua === 'string' && ua !== '') this.base.userAgent = ua
  }

  annotate (key: string, value: string): void {
    if (!this.annotations.has(key)) this.annotations.set(key, value)
  }

  /** An error thrown by a later step: its Status goes in the event; anything else is the Panic stage. */
  failed (err: unknown): void {
    if (isStatusError(err)) { this.error = errorStatus(err); return }
    if (this.done) return
    this.done = true
    this.emit('Panic', { status: { metadata: {}, status: 'Failure', reason: 'InternalError', message: `APIServer panic'd: ${String(err)}`, code: 500 } })
  }

  /** Long-running requests only: the headers are sent. */
  responseStarted (res: ServerResponse, user: UserInfo | undefined): void {
    if (this.started || this.done) return
    this.started = true
    this.emit('ResponseStarted', { status: this.status(res), user })
  }

  async complete (res: ServerResponse, user: UserInfo | undefined): Promise<void> {
    if (this.done) return
    this.done = true
    const at = this.auditor.now()
    const req = res.req
    const requestObject = this.requestCopy === undefined ? undefined : await decodeCopy(this.requestCopy.bytes(), req.headers['content-type'], req.headers['content-encoding'], this.messages)
    const responseObject = this.responseCopy === undefined || res.statusCode === 204
      ? undefined
      : await decodeCopy(this.responseCopy.bytes(), res.getHeader('content-type'), res.getHeader('content-encoding'), this.messages)
    this.emit('ResponseComplete', { status: this.status(res, responseObject), requestObject, responseObject, user, at })
  }

  private status (res: ServerResponse, responseObject?: unknown): ResponseStatus {
    const code = res.statusCode
    if (this.error !== undefined) return { ...this.error, code }
    if (isObj(responseObject) && responseObject.kind === 'Status') {
      const s: ResponseStatus = { metadata: {}, code }
      for (const k of ['status', 'message', 'reason'] as const) if (typeof responseObject[k] === 'string' && responseObject[k] !== '') s[k] = responseObject[k] as string
      if (responseObject.details !== undefined) s.details = responseObject.details
      return s
    }
    return { metadata: {}, code }
  }

  /** Writes the event of `stage` (unless the policy omits it); `user` is target.user now, `at` the stage's time (default now). */
  emit (stage: Stage, parts: StageParts = {}): void {
    if (this.config.omitStages.includes(stage)) return
    const { status: responseStatus, requestObject, responseObject, user: current } = parts
    const e: AuditEvent = {
      kind: 'Event', apiVersion: this.auditor.eventApiVersion, level: this.config.level, auditID: this.auditID, stage, ...this.base,
      requestReceivedTimestamp: '', stageTimestamp: ''
    }
    // withImpersonation replaces target.user: the event keeps who asked and records whom they acted as.
    if (current !== undefined && current !== this.user) e.impersonatedUser = eventUser(current)
    if (e.objectRef !== undefined && isObj(requestObject) && isObj(requestObject.metadata)) {
      const m = requestObject.metadata
      const ref: ObjectReference = { ...e.objectRef }
      if (ref.namespace === undefined && typeof m.namespace === 'string' && m.namespace !== '') ref.namespace = m.namespace
      if (ref.name === undefined && typeof m.name === 'string' && m.name !== '') ref.name = m.name
      e.objectRef = ref
    }
    if (responseStatus !== undefined) e.responseStatus = responseStatus
    const trim = (o: unknown): unknown => this.config.omitManagedFields ? withoutManagedFields(o) : o
    if (requestObject !== undefined && atLeast(this.config.level, 'Request')) e.requestObject = trim(requestObject)
    if (responseObject !== undefined && this.config.level === 'RequestResponse') e.responseObject = trim(responseObject)
    e.requestReceivedTimestamp = microTime(this.received)
    e.stageTimestamp = microTime(stage === 'RequestReceived' ? this.received : parts.at ?? this.auditor.now())
    if (this.annotations.size > 0) e.annotations = Object.fromEntries(this.annotations)
    this.auditor.emit(e)
  }
}

/** Calls `onHeaders` once, right after the status line and headers are committed (explicitly or by the first write). */
function onHeaders (res: ServerResponse, onHeaders: () => void): void {
  const writeHead = res.writeHead
  let called = false
  res.writeHead = function (this: ServerResponse, ...args: unknown[]) {
    const r = (writeHead as (...a: unknown[]) => ServerResponse).apply(this, args)
    if (!called) { called = true; onHeaders() }
    return r
  } as ServerResponse['writeHead']
}

/**
 * The audit step: evaluates the policy for the authenticated user (so it sits just inside withAuthentication, outside
 * impersonation and authorization, as in Kubernetes), emits RequestReceived, ResponseStarted (long-running requests
 * only), ResponseComplete or Panic, and exposes `target.audit` so later steps can annotate the event.
 */
export function withAudit (auditor: Auditor, next: RequestHandler): RequestHandler {
  // Protobuf request bodies are logged in their JSON form, as Kubernetes logs them.
  const messages = new Messages()
  return async (req, res, target) => {
    const auditID = assignAuditID(auditor, req, res, target)
    const user = target.user
    if (user === undefined) throw new Error('withAudit needs an authenticated user')
    const attrs = requestAttributes(req, target.url, user)
    const config = auditor.evaluate(attrs)
    if (config.level === 'None') return await next(req, res, target)
    const audit = new RequestAudit(auditor, config, { auditID, req, attrs, user, messages })
    target.audit = audit
    const deprecated = attrs.resourceRequest ? auditor.deprecated(attrs.apiGroup, attrs.apiVersion, attrs.resource) : undefined
    if (deprecated !== undefined) {
      audit.annotate('orch.io/deprecated', 'true')
      if (deprecated.removedRelease !== undefined) audit.annotate('orch.io/removed-release', deprecated.removedRelease)
    }
    audit.emit('RequestReceived')
    if (atLeast(config.level, 'Request')) audit.requestCopy = copyRequestBody(req, auditor.maxCapturedBytes)
    // Streams (watch events, logs) are not objects: Kubernetes never logs them as responseObject.
    if (config.level === 'RequestResponse' && !target.longRunning) audit.responseCopy = copyResponseBody(res, auditor.maxCapturedBytes)
    if (target.longRunning) onHeaders(res, () => audit.responseStarted(res, target.user))
    const complete = (): void => {
      // What admission plugins noted (PodSecurity's audit level, webhooks' annotations) goes on the event.
      for (const [k, v] of Object.entries(requestNotes(req).auditAnnotations)) audit.annotate(k, v)
      void audit.complete(res, target.user)
    }
    res.once('finish', complete)
    res.once('close', complete)
    try {
      await next(req, res, target)
    } catch (err) {
      audit.failed(err)
      throw err
    }
  }
}

/** The auditor's `deprecatedApi` for a registry: the versions its definitions mark deprecated (CRD versions). */
export function registryDeprecations (registry: Registry): (group: string, version: string, resource: string) => DeprecatedApi | undefined {
  return (group, version, resource) => {
    const d = registry.handler(group, version, resource)?.definition.deprecated
    return d === undefined ? undefined : (d.removedRelease === undefined ? {} : { removedRelease: d.removedRelease })
  }
}

/** Kubernetes' wording of a failed authentication's event message. */
function authMethods (req: IncomingMessage, url: URL): string {
  const methods: string[] = []
  const auth = (req.headers.authorization ?? '').trim()
  const scheme = auth.split(' ')[0]?.toLowerCase()
  if (scheme === 'basic') methods.push('basic')
  if (scheme === 'bearer' && auth.split(' ').length > 1) methods.push('bearer')
  if ((url.searchParams.get('access_token') ?? '').trim() !== '') methods.push('access_token')
  const sock = req.socket as Partial<TLSSocket>
  if (typeof sock.getPeerCertificate === 'function' && Object.keys(sock.getPeerCertificate() ?? {}).length > 0) methods.push('x509')
  return methods.length > 0 ? `Authentication failed, attempted: ${methods.join(', ')}` : 'Authentication failed, no credentials provided'
}

/**
 * The outermost audit step (Kubernetes' WithAuditInit and WithFailedAuthenticationAudit): every response gets an
 * `Audit-Id`, and a request refused by authentication (401) gets one ResponseStarted event, for a user with no name.
 */
export function withAuditInit (auditor: Auditor, next: RequestHandler): RequestHandler {
  return async (req, res, target) => {
    const auditID = assignAuditID(auditor, req, res, target)
    const received = auditor.now()
    try {
      await next(req, res, target)
    } catch (err) {
      if (isStatusError(err) && err.code === 401 && target.user === undefined) {
        const nobody: UserInfo = { username: '', groups: [] }
        const attrs = requestAttributes(req, target.url, nobody)
        const config = auditor.evaluate(attrs)
        if (config.level !== 'None') {
          const audit = new RequestAudit(auditor, config, { auditID, req, attrs, user: nobody, received })
          audit.emit('ResponseStarted', { status: { metadata: {}, message: authMethods(req, target.url), code: 401 } })
        }
      }
      throw err
    }
  }
}
