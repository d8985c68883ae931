// Resource requests: resolve the handler, check scope and verb, then run the verb (authn/authz wrap this, see server.ts).

import { noteDeprecatedApi, type DeprecatedApiRecorder } from './deprecated-apis.js'
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { Messages } from './protobuf/messages.js'
import { hasProtobufMessage } from './protobuf/encode.js'
import type { Logger } from 'pino'
import { badRequest, methodNotAllowed, methodNotRouted, pathNotFound, type StatusError } from '../errors/status-error.js'
import type { Registry, ResourceHandler, Subresource, UserInfo } from '../registry/types.js'
import type { ResourceDefinition } from '../schema/types.js'
import { negotiateResponse, type IncludeObject, type ResponseMedia } from './negotiate.js'
import type { RequestInfo } from './request-info.js'
import type { TableConvertor } from './table.js'
import type { WatchCounter, WatchStream } from './watch.js'
import { serveGet, serveList, serveWatch } from './handlers-read.js'
import { serveCreate, serveDelete, serveDeleteCollection, serveUpdate } from './handlers-write.js'
import { servePatch } from './handlers-patch.js'
import { serveCreaterCreate, serveSubresourceCreate } from './handlers-subresource.js'
import type { PodLogProxy } from './pod-log.js'
import type { ResourceProxy } from './proxy.js'
import { POD_STREAM_SUBRESOURCES, type PodStreamKind, type PodStreamProxy, type UpgradeConnection } from './pod-stream.js'
import { buildRequestContext, prettyOf, requestNotes } from './request-context.js'

/** What resource handlers need from the server, injected so tests can build many servers. */
export interface ResourceEnv {
  registry: Registry
  now: () => number
  random: () => number
  logger: Logger
  /** Table convertor for a definition (cached by the server, rebuilt when definitions change). */
  convertor(def: ResourceDefinition): TableConvertor
  /** Registers an open watch so shutdown can end it; returns the unregister function. */
  trackWatch(stream: WatchStream): () => void
  /** Watch metrics (apiserver_registered_watchers, apiserver_watch_events_*): a watch of `kind` opened; none without. */
  watchOpened?(w: { group: string, version: string, kind: string }): WatchCounter
  maxWatchPendingBytes?: number
  /** --min-request-timeout: a watch without timeoutSeconds lasts between this and twice this (default 30 min). */
  minRequestTimeoutMs?: number
  /** Serves GET pods/{name}/log by streaming from the pod's orchlet; without it the subresource is 404. */
  podLogs?: PodLogProxy
  /** Serves nodes/proxy, pods/proxy and services/proxy; without it they are 404. */
  proxy?: ResourceProxy
  /** Serves pods/exec, pods/attach and pods/portforward by piping the upgraded connection to the pod's orchlet. */
  podStreams?: PodStreamProxy
  /** The raw connection of an upgrade request (undefined for ordinary requests). */
  upgradeOf?: (req: IncomingMessage) => UpgradeConnection | undefined
  /** The Kubernetes protobuf messages (request bodies in `application/vnd.kubernetes.protobuf`). */
  protobuf?: Messages
  /** Counts requests to deprecated APIs (apiserver_requested_deprecated_apis); they are warned about either way. */
  deprecatedApis?: DeprecatedApiRecorder
}

/** One resource request after routing. */
export interface Call {
  env: ResourceEnv
  req: IncomingMessage
  res: ServerResponse
  url: URL
  info: RequestInfo
  handler: ResourceHandler
  def: ResourceDefinition
  user: UserInfo
  subresource?: Subresource
  /** Negotiated response form; reads may use Table, writes only JSON/YAML. */
  media: ResponseMedia
  pretty: boolean
}

function describeTarget (info: RequestInfo): string {
  const r = info.group === '' ? info.resource : `${info.resource}.${info.group}`
  return info.name === '' ? `the collection ${r}` : `${r}${info.subresource === '' ? '' : '/' + info.subresource}`
}

/** Finds the handler and rejects scopes, subresources and verbs the resource does not serve. */
function route (env: ResourceEnv, info: RequestInfo): { handler: ResourceHandler; def: ResourceDefinition; subresource?: Subresource } | StatusError {
  const handler = env.registry.handler(info.group, info.version, info.resource)
  if (handler === undefined) return pathNotFound()
  const def = handler.definition
  if (!def.namespaced && info.namespace !== '') return pathNotFound()
  if (def.namespaced && info.namespace === '' && info.name !== '') return pathNotFound()
  let subresource: Subresource | undefined
  if (info.subresource !== '') {
    if (info.subresource === 'status' && def.subresources.status === true) subresource = 'status'
    else if (info.subresource === 'scale' && def.subresources.scale !== undefined) subresource = 'scale'
    else if (info.subresource === 'approval' && def.subresources.approval === true) subresource = 'approval'
    else return pathNotFound()
    if (info.verb !== 'get' && info.verb !== 'update' && info.verb !== 'patch') return methodNotAllowed(methodOf(info.verb), describeTarget(info))
    return { handler, def, subresource }
  }
  if (def.namespaced && info.namespace === '' && (info.verb === 'create' || info.verb === 'deletecollection')) {
    return methodNotAllowed(methodOf(info.verb), describeTarget(info))
  }
  if (!def.verbs.includes(info.verb)) return methodNotAllowed(methodOf(info.verb), describeTarget(info))
  return { handler, def, subresource }
}

function methodOf (verb: RequestInfo['verb']): string {
  switch (verb) {
    case 'create': return 'POST'
    case 'update': return 'PUT'
    case 'patch': return 'PATCH'
    case 'delete': case 'deletecollection': return 'DELETE'
    default: return 'GET'
  }
}

/** Serves one resource request for `user` (authenticated and authorized by the wrappers around it); throws StatusError. */
export async function serveResource (env: ResourceEnv, req: IncomingMessage, res: ServerResponse, url: URL, info: RequestInfo, user: UserInfo): Promise<void> {
  noteDeprecatedApi(env.registry, req, info, env.deprecatedApis)
  if (info.subresource === 'log' && info.group === '' && info.resource === 'pods' && info.namespace !== '' && env.podLogs !== undefined) {
    if (info.verb !== 'get') throw methodNotAllowed(methodOf(info.verb), describeTarget(info))
    const ctx = buildRequestContext(req, user, url.searchParams, false)
    return await env.podLogs.serve({ registry: env.registry, ctx, version: info.version, namespace: info.namespace, name: info.name, query: url.searchParams, req, res })
  }
  if (env.proxy?.handles(info) === true) {
    const ctx = buildRequestContext(req, user, url.searchParams, false)
    return await env.proxy.serve({ registry: env.registry, ctx, info, url, req, res })
  }
  if (POD_STREAM_SUBRESOURCES.has(info.subresource) && info.group === '' && info.resource === 'pods' && info.namespace !== '' && env.podStreams !== undefined) {
    // GET is how WebSocket clients (kubectl 1.30+) ask, POST how SPDY clients do; both are authorized by then.
    if (info.verb !== 'create' && info.verb !== 'get') throw methodNotAllowed(methodOf(info.verb), describeTarget(info))
    const ctx = buildRequestContext(req, user, url.searchParams, false)
    return await env.podStreams.serve({ registry: env.registry, ctx, version: info.version, namespace: info.namespace, name: info.name, kind: info.subresource as PodStreamKind, query: url.searchParams, req, upgrade: env.upgradeOf?.(req) })
  }
  const creater = info.subresource === '' ? undefined : env.registry.subresource(info.group, info.version, info.resource, info.subresource)
  if (creater !== undefined && info.namespace !== '') {
    if (info.verb !== 'create') throw methodNotAllowed(methodOf(info.verb), describeTarget(info))
    return await serveSubresourceCreate(env, req, res, url, info, user, creater)
  }
  const createOnly = env.registry.creater(info.group, info.version, info.resource)
  if (createOnly !== undefined) {
    // Only POST on the collection exists (as kube-apiserver installs a Creater-only storage): other paths are
    // unknown, other methods on the collection are not allowed.
    const namespaced = createOnly.definition.namespaced
    if (info.name !== '' || (namespaced ? info.namespace === '' : info.namespace !== '')) throw pathNotFound()
    if (info.verb !== 'create') throw methodNotRouted()
    return await serveCreaterCreate(env, req, res, url, info, user, createOnly)
  }
  const routed = route(env, info)
  if ('code' in routed) throw routed
  const isRead = info.verb === 'get' || info.verb === 'list' || info.verb === 'watch'
  const negotiated = negotiateResponse(req.headers.accept, { allowTable: isRead, protobuf: () => protobufFor(env, routed.def, routed.subresource) })
  if ('code' in negotiated) throw negotiated
  if (negotiated.form === 'protobuf') requestNotes(req).protobufErrors = negotiated.messages
  const media = negotiated.form === 'table' ? { ...negotiated, includeObject: includeObjectOf(url.searchParams.get('includeObject')) } : negotiated
  const pretty = prettyOf(url.searchParams)
  const call: Call = { env, req, res, url, info, user, pretty, media, ...routed }
  switch (info.verb) {
    case 'get': return await serveGet(call)
    case 'list': return await serveList(call)
    case 'watch': return await serveWatch(call)
    case 'create': return await serveCreate(call)
    case 'update': return await serveUpdate(call)
    case 'delete': return await serveDelete(call)
    case 'deletecollection': return await serveDeleteCollection(call)
    case 'patch': return await servePatch(call)
  }
}

/** The messages when the kind (or its scale view) has a protobuf message; custom resources have none (406 for protobuf alone). */
function protobufFor (env: ResourceEnv, def: ResourceDefinition, subresource?: Subresource): Messages | undefined {
  if (env.protobuf === undefined || def.custom !== undefined) return undefined
  const kind = subresource === 'scale' ? 'Scale' : def.kind
  const apiVersion = subresource === 'scale' ? 'autoscaling/v1' : def.group === '' ? def.version : `${def.group}/${def.version}`
  return hasProtobufMessage(apiVersion, kind) ? env.protobuf : undefined
}

/** `?includeObject=` of a Table request; 400 for a value Kubernetes does not know. */
function includeObjectOf (value: string | null): IncludeObject {
  if (value === null || value === '') return 'Metadata'
  if (value === 'None' || value === 'Metadata' || value === 'Object') return value
  throw badRequest(`includeObject: Unsupported value: "${value}": supported values: "None", "Metadata", "Object"`)
}
