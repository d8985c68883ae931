// What a request carries into the registry: the RequestContext, and query parameter validation.

import type { IncomingMessage } from 'node:http'
import type { Messages } from './protobuf/messages.js'
import { badRequest, invalid } from '../errors/status-error.js'
import type { DeleteOptions, FieldValidation, ListQuery, RequestContext, UserInfo, WatchQuery } from '../registry/types.js'

const FIELD_VALIDATIONS: FieldValidation[] = ['Ignore', 'Warn', 'Strict']

/** The options kind of a write, as kube-apiserver names it when an option is invalid (422). */
export type WriteOptionsKind = 'CreateOptions' | 'UpdateOptions' | 'PatchOptions' | 'DeleteOptions'

const OPTIONS_BY_METHOD: Record<string, WriteOptionsKind> = { POST: 'CreateOptions', PUT: 'UpdateOptions', PATCH: 'PatchOptions', DELETE: 'DeleteOptions' }

/** Invalid write options are 422 `CreateOptions.meta.orch.io "" is invalid: ...`, as kube-apiserver validates them. */
function invalidOption (kind: WriteOptionsKind, field: string, reason: string, message: string): never {
  throw invalid('meta.orch.io', kind, '', [{ reason, field, message }])
}

function unsupported (kind: WriteOptionsKind, field: string, value: string, supported: string[]): never {
  invalidOption(kind, field, 'FieldValueNotSupported', `Unsupported value: "${value}": supported values: ${supported.map(s => `"${s}"`).join(', ')}`)
}

/**
 * dryRun: absent or present without a value -> a real request (spec 4.9.2: side effects permitted);
 * otherwise every value must be `All`, the only dry-run mode Kubernetes has.
 */
export function parseDryRun (values: string[], kind: WriteOptionsKind = 'CreateOptions'): boolean {
  const given = values.filter(v => v !== '')
  for (const v of given) if (v !== 'All') unsupported(kind, 'dryRun', v, ['All'])
  return given.length > 0
}

export function parseFieldValidation (value: string | null, kind: WriteOptionsKind = 'CreateOptions'): FieldValidation {
  if (value === null || value === '') return 'Warn'
  if (!(FIELD_VALIDATIONS as string[]).includes(value)) unsupported(kind, 'fieldValidation', value, FIELD_VALIDATIONS)
  return value as FieldValidation
}

/** Builds what a request carries into the registry. */
export function buildRequestContext (req: IncomingMessage, user: UserInfo, query: URLSearchParams, write: boolean): RequestContext {
  const userAgent = typeof req.headers['user-agent'] === 'string' ? req.headers['user-agent'] : undefined
  const fieldManager = query.get('fieldManager') ?? undefined
  if (fieldManager !== undefined && fieldManager.length > 128) {
    invalidOption(OPTIONS_BY_METHOD[req.method ?? ''] ?? 'CreateOptions', 'fieldManager', 'FieldValueTooLong', 'Too long: must have at most 128 bytes')
  }
  const kind = OPTIONS_BY_METHOD[req.method ?? ''] ?? 'CreateOptions'
  const notes = requestNotes(req)
  return {
    user,
    dryRun: write ? parseDryRun(query.getAll('dryRun'), kind) : false,
    fieldManager,
    fieldValidation: write ? parseFieldValidation(query.get('fieldValidation'), kind) : 'Warn',
    userAgent,
    warnings: notes.warnings,
    auditAnnotations: notes.auditAnnotations
  }
}

/** What the handlers of one request learn that is written out even when it fails: warnings and audit annotations. */
export interface RequestNotes {
  warnings: string[]
  auditAnnotations: Record<string, string>
  /** Set once a resource request negotiated protobuf: its error Status is answered in protobuf too, as Kubernetes does. */
  protobufErrors?: Messages
}

const NOTES = Symbol('orch.requestNotes')

/** The request's notes, kept on the request itself (made on first use): the context's and the pipeline's are the same. */
export function requestNotes (req: IncomingMessage): RequestNotes {
  const r = req as IncomingMessage & { [NOTES]?: RequestNotes }
  return (r[NOTES] ??= { warnings: [], auditAnnotations: {} })
}

function parseInteger (name: string, value: string | null, min = Number.MIN_SAFE_INTEGER): number | undefined {
  if (value === null || value === '') return undefined
  if (!/^-?\d+$/.test(value)) throw badRequest(`invalid value for ${name}: strconv.ParseInt: parsing "${value}": invalid syntax`)
  const n = Number(value)
  if (!Number.isSafeInteger(n) || n < min) throw badRequest(`invalid value for ${name}: ${value}: must be an integer >= ${min}`)
  return n
}

export function parseBoolean (name: string, value: string | null): boolean | undefined {
  if (value === null) return undefined
  // Go's strconv.ParseBool, as kube-apiserver decodes query booleans (the Python client sends `True`).
  if (value === '' || ['1', 't', 'T', 'TRUE', 'true', 'True'].includes(value)) return true
  if (['0', 'f', 'F', 'FALSE', 'false', 'False'].includes(value)) return false
  throw badRequest(`invalid value for ${name}: strconv.ParseBool: parsing "${value}": invalid syntax`)
}

/** `?pretty=`: Go's ParseBool, an unparsable value meaning false (kube-apiserver ignores the error). */
export function prettyOf (q: URLSearchParams): boolean {
  const v = q.get('pretty')
  return v !== null && v !== '' && ['1', 't', 'T', 'TRUE', 'true', 'True'].includes(v)
}

function parseMatch (value: string | null): 'Exact' | 'NotOlderThan' | undefined {
  if (value === null || value === '') return undefined
  // List options stay 400, as spec 7 lists them.
  if (value !== 'Exact' && value !== 'NotOlderThan') throw badRequest(`resourceVersionMatch: Unsupported value: "${value}": supported values: "Exact", "NotOlderThan"`)
  return value
}

function optional (q: URLSearchParams, name: string): string | undefined {
  const v = q.get(name)
  return v === null ? undefined : v
}

/** List parameters with the rules of spec 4.6 that need no storage knowledge. */
export function parseListQuery (q: URLSearchParams): ListQuery {
  const limit = parseInteger('limit', q.get('limit'), 0)
  const resourceVersion = optional(q, 'resourceVersion')
  const resourceVersionMatch = parseMatch(q.get('resourceVersionMatch'))
  const cont = optional(q, 'continue')
  if (resourceVersionMatch !== undefined && (resourceVersion === undefined || resourceVersion === '')) {
    throw badRequest('resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided')
  }
  if (cont !== undefined && cont !== '' && resourceVersion !== undefined && resourceVersion !== '' && resourceVersion !== '0') {
    throw badRequest('specifying resourceVersion is not allowed when using continue')
  }
  if (resourceVersionMatch === 'Exact' && resourceVersion === '0') {
    throw badRequest('resourceVersionMatch: Forbidden: resourceVersionMatch "Exact" is forbidden for resourceVersion "0"')
  }
  const out: ListQuery = {}
  const labelSelector = optional(q, 'labelSelector')
  const fieldSelector = optional(q, 'fieldSelector')
  if (labelSelector !== undefined && labelSelector !== '') out.labelSelector = labelSelector
  if (fieldSelector !== undefined && fieldSelector !== '') out.fieldSelector = fieldSelector
  if (limit !== undefined && limit > 0) out.limit = limit
  if (cont !== undefined && cont !== '') out.continue = cont
  if (resourceVersion !== undefined) out.resourceVersion = resourceVersion
  if (resourceVersionMatch !== undefined) out.resourceVersionMatch = resourceVersionMatch
  return out
}

export function parseWatchQuery (q: URLSearchParams, name: string): WatchQuery {
  const out: WatchQuery = {}
  const labelSelector = optional(q, 'labelSelector')
  const fieldSelector = optional(q, 'fieldSelector')
  if (labelSelector !== undefined && labelSelector !== '') out.labelSelector = labelSelector
  if (fieldSelector !== undefined && fieldSelector !== '') out.fieldSelector = fieldSelector
  const rv = optional(q, 'resourceVersion')
  if (rv !== undefined) out.resourceVersion = rv
  const match = parseMatch(q.get('resourceVersionMatch'))
  if (match !== undefined) out.resourceVersionMatch = match
  const bookmarks = parseBoolean('allowWatchBookmarks', q.get('allowWatchBookmarks'))
  if (bookmarks !== undefined) out.allowWatchBookmarks = bookmarks
  const initial = parseBoolean('sendInitialEvents', q.get('sendInitialEvents'))
  if (initial !== undefined) out.sendInitialEvents = initial
  if (name !== '') out.name = name
  return out
}

/** `timeoutSeconds` of a watch in ms, or undefined for the server default. */
export function parseTimeoutMs (q: URLSearchParams): number | undefined {
  const s = parseInteger('timeoutSeconds', q.get('timeoutSeconds'), 0)
  return s === undefined || s === 0 ? undefined : s * 1000
}

const PROPAGATION = ['Orphan', 'Background', 'Foreground'] as const

/** DeleteOptions from the query, then from a JSON body (body fields win). Returns the options and its dryRun values. */
export function parseDeleteOptions (q: URLSearchParams, body: Record<string, unknown> | undefined): { opts: DeleteOptions; dryRun: string[] } {
  const opts: DeleteOptions = {}
  const grace = parseInteger('gracePeriodSeconds', q.get('gracePeriodSeconds'))
  if (grace !== undefined) opts.gracePeriodSeconds = grace
  const policy = q.get('propagationPolicy')
  if (policy !== null && policy !== '') opts.propagationPolicy = checkPolicy(policy)
  const orphan = parseBoolean('orphanDependents', q.get('orphanDependents'))
  if (orphan !== undefined) opts.orphanDependents = orphan
  let dryRun = q.getAll('dryRun')
  if (body !== undefined) {
    if (body.kind !== undefined && body.kind !== 'DeleteOptions') {
      throw badRequest(`the object provided is unrecognized (must be of type DeleteOptions): ${String(body.kind)}`)
    }
    if (body.gracePeriodSeconds !== undefined && body.gracePeriodSeconds !== null) {
      if (!Number.isInteger(body.gracePeriodSeconds)) throw badRequest('gracePeriodSeconds: Invalid value: must be an integer')
      opts.gracePeriodSeconds = body.gracePeriodSeconds as number
    }
    if (typeof body.propagationPolicy === 'string') opts.propagationPolicy = checkPolicy(body.propagationPolicy)
    if (typeof body.orphanDependents === 'boolean') opts.orphanDependents = body.orphanDependents
    if (body.preconditions !== undefined && body.preconditions !== null) opts.preconditions = checkPreconditions(body.preconditions)
    if (Array.isArray(body.dryRun)) dryRun = body.dryRun.map(String)
  }
  if (opts.orphanDependents !== undefined && opts.propagationPolicy !== undefined) {
    invalidOption('DeleteOptions', 'propagationPolicy', 'FieldValueInvalid', `Invalid value: "${opts.propagationPolicy ?? ''}": orphanDependents and deletionPropagation cannot be both set`)
  }
  return { opts, dryRun }
}

function checkPolicy (value: string): DeleteOptions['propagationPolicy'] {
  if (!(PROPAGATION as readonly string[]).includes(value)) unsupported('DeleteOptions', 'propagationPolicy', value, [...PROPAGATION])
  return value as DeleteOptions['propagationPolicy']
}

function checkPreconditions (value: unknown): DeleteOptions['preconditions'] {
  if (typeof value !== 'object' || Array.isArray(value)) throw badRequest('preconditions: Invalid value: must be an object')
  const p = value as Record<string, unknown>
  const out: { uid?: string; resourceVersion?: string } = {}
  if (typeof p.uid === 'string') out.uid = p.uid
  if (typeof p.resourceVersion === 'string') out.resourceVersion = p.resourceVersion
  return out
}
