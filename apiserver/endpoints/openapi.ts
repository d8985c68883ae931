// /openapi/v2 and /openapi/v3 (+ per group-version documents): built from definitions once, cached, hashed for ETags.

import { createHash } from 'node:crypto'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { notAcceptable, pathNotFound } from '../errors/status-error.js'
import type { Registry } from '../registry/types.js'
import type { ResourceDefinition } from '../schema/types.js'
import { send } from './encode.js'
import { acceptsJson } from './negotiate.js'
import { OPENAPI_V2_PROTOBUF, OPENAPI_V2_PROTOBUF_CONTENT_TYPE, encodeOpenAPIv2 } from './protobuf/openapi-v2.js'

/** The document builders of apiserver/schema/openapi.ts, injected so the HTTP layer does not build schemas itself. */
export interface OpenAPIBuilders {
  v2(defs: ResourceDefinition[]): unknown
  v3GroupVersion(defs: ResourceDefinition[], group: string, version: string): unknown
}

interface Doc { body: Buffer; hash: string }

function docOf (value: unknown): Doc {
  const body = Buffer.from(JSON.stringify(value))
  return { body, hash: createHash('sha512').update(body).digest('hex').toUpperCase() }
}

function protobufDocOf (doc: Record<string, unknown>): Doc {
  const body = encodeOpenAPIv2(doc)
  return { body, hash: createHash('sha512').update(body).digest('hex').toUpperCase() }
}

/** Whether the client takes OpenAPI v2 as protobuf (kubectl 1.27/1.28 ask for it first). */
function wantsProtobuf (accept: string | undefined): boolean {
  return (accept ?? '').split(',').some(a => a.trim().split(';')[0] === OPENAPI_V2_PROTOBUF)
}

/** `api/v1` or `apis/{group}/{version}`: the path segment Kubernetes uses under /openapi/v3. */
function gvPath (group: string, version: string): string {
  return group === '' ? `api/${version}` : `apis/${group}/${version}`
}

export interface OpenAPIEndpoint {
  /** Serves a path under /openapi; false when the path is not an OpenAPI path. */
  serve(req: IncomingMessage, res: ServerResponse, url: URL): boolean
  invalidate(): void
}

export function createOpenAPIEndpoint (registry: Registry, builders: OpenAPIBuilders): OpenAPIEndpoint {
  let v2: Doc | undefined
  let v2pb: Doc | undefined
  let v3: Map<string, Doc | { group: string; version: string }> | undefined
  let v3Root: Doc | undefined

  const groupVersions = (): Map<string, Doc | { group: string; version: string }> => {
    if (v3 !== undefined) return v3
    const m = new Map<string, Doc | { group: string; version: string }>()
    for (const d of registry.definitions()) m.set(gvPath(d.group, d.version), { group: d.group, version: d.version })
    v3 = m
    return m
  }
  const gvDoc = (key: string): Doc | undefined => {
    const m = groupVersions()
    const entry = m.get(key)
    if (entry === undefined) return undefined
    if ('body' in entry) return entry
    const doc = docOf(builders.v3GroupVersion(registry.definitions(), entry.group, entry.version))
    m.set(key, doc)
    return doc
  }
  const root = (): Doc => {
    if (v3Root !== undefined) return v3Root
    const paths: Record<string, { serverRelativeURL: string }> = {}
    for (const key of [...groupVersions().keys()].sort()) {
      const d = gvDoc(key)!
      paths[key] = { serverRelativeURL: `/openapi/v3/${key}?hash=${d.hash}` }
    }
    v3Root = docOf({ paths })
    return v3Root
  }

  function reply (req: IncomingMessage, res: ServerResponse, doc: Doc, immutable: boolean, contentType = 'application/json'): void {
    const etag = `"${doc.hash}"`
    const headers: Record<string, string> = {
      ETag: etag,
      'Cache-Control': immutable ? 'public, immutable' : 'no-cache, private'
    }
    if (req.headers['if-none-match'] === etag) {
      res.writeHead(304, headers)
      res.end()
      return
    }
    send(req, res, 200, { contentType, body: doc.body }, headers)
  }

  return {
    invalidate () { v2 = undefined; v2pb = undefined; v3 = undefined; v3Root = undefined },
    serve (req, res, url) {
      const p = url.pathname.replace(/\/+$/, '')
      if (p !== '/openapi/v2' && !p.startsWith('/openapi/v3')) return false
      if (p === '/openapi/v2' && wantsProtobuf(req.headers.accept)) {
        v2 ??= docOf(builders.v2(registry.definitions()))
        v2pb ??= protobufDocOf(JSON.parse(v2.body.toString('utf8')) as Record<string, unknown>)
        reply(req, res, v2pb, false, OPENAPI_V2_PROTOBUF_CONTENT_TYPE)
        return true
      }
      if (!acceptsJson(req.headers.accept)) throw notAcceptable(['application/json', OPENAPI_V2_PROTOBUF])
      if (p === '/openapi/v2') {
        v2 ??= docOf(builders.v2(registry.definitions()))
        reply(req, res, v2, false)
        return true
      }
      if (p === '/openapi/v3') {
        reply(req, res, root(), false)
        return true
      }
      const doc = gvDoc(p.slice('/openapi/v3/'.length))
      if (doc === undefined) throw pathNotFound()
      reply(req, res, doc, url.searchParams.get('hash') === doc.hash)
      return true
    }
  }
}
