// OpenAPI v2 in protobuf (`application/com.github.proto-openapi.spec.v2@v1.0+protobuf`), the form kubectl 1.27 and
// 1.28 ask for: the JSON document mapped onto gnostic's openapi.v2 messages (field numbers of its OpenAPIv2.proto),
// written with protobufjs. Only the parts clients read are carried: info, paths with operations and parameters,
// definitions, and the vendor extensions (as YAML, which JSON is).

import protobuf from 'protobufjs/minimal.js'

/** What clients ask for (an `@` is not a token character, so the answer's Content-Type spells it with a dot). */
export const OPENAPI_V2_PROTOBUF = 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf'
export const OPENAPI_V2_PROTOBUF_CONTENT_TYPE = 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf'

type J = Record<string, unknown>
type W = protobuf.Writer

const str = (w: W, id: number, v: unknown): void => { if (typeof v === 'string' && v !== '') w.uint32((id << 3) | 2).string(v) }
const bool = (w: W, id: number, v: unknown): void => { if (v === true) w.uint32(id << 3).bool(true) }
const int = (w: W, id: number, v: unknown): void => { if (typeof v === 'number') w.uint32(id << 3).int64(v) }
const dbl = (w: W, id: number, v: unknown): void => { if (typeof v === 'number') w.uint32((id << 3) | 1).double(v) }
const msg = (w: W, id: number, write: (w: W) => void): void => {
  const inner = protobuf.Writer.create()
  write(inner)
  w.uint32((id << 3) | 2).bytes(inner.finish())
}
const strings = (w: W, id: number, v: unknown): void => { if (Array.isArray(v)) for (const s of v) str(w, id, String(s)) }
const obj = (v: unknown): J => (v !== null && typeof v === 'object' && !Array.isArray(v) ? v as J : {})

/** gnostic's Any: the value written as YAML (JSON is YAML). */
function anyValue (w: W, value: unknown): void {
  str(w, 2, JSON.stringify(value) + '\n')
}

/** `x-` members as NamedAny entries. */
function extensions (w: W, id: number, o: J): void {
  for (const [k, v] of Object.entries(o)) {
    if (!k.startsWith('x-')) continue
    msg(w, id, e => { str(e, 1, k); msg(e, 2, a => anyValue(a, v)) })
  }
}

function schema (w: W, s: J): void {
  str(w, 1, s.$ref)
  str(w, 2, s.format)
  str(w, 4, s.description)
  if (s.default !== undefined) msg(w, 5, a => anyValue(a, s.default))
  dbl(w, 6, s.multipleOf); dbl(w, 7, s.maximum); bool(w, 8, s.exclusiveMaximum); dbl(w, 9, s.minimum); bool(w, 10, s.exclusiveMinimum)
  int(w, 11, s.maxLength); int(w, 12, s.minLength); str(w, 13, s.pattern); int(w, 14, s.maxItems); int(w, 15, s.minItems)
  bool(w, 16, s.uniqueItems); int(w, 17, s.maxProperties); int(w, 18, s.minProperties)
  strings(w, 19, s.required)
  if (Array.isArray(s.enum)) for (const e of s.enum) msg(w, 20, a => anyValue(a, e))
  if (s.additionalProperties !== undefined) {
    msg(w, 21, ap => {
      if (typeof s.additionalProperties === 'boolean') ap.uint32(2 << 3).bool(s.additionalProperties)
      else msg(ap, 1, inner => schema(inner, obj(s.additionalProperties)))
    })
  }
  if (s.type !== undefined) msg(w, 22, t => strings(t, 1, Array.isArray(s.type) ? s.type : [s.type]))
  if (s.items !== undefined) msg(w, 23, it => { for (const i of Array.isArray(s.items) ? s.items : [s.items]) msg(it, 1, inner => schema(inner, obj(i))) })
  if (Array.isArray(s.allOf)) for (const a of s.allOf) msg(w, 24, inner => schema(inner, obj(a)))
  if (s.properties !== undefined) msg(w, 25, p => namedSchemas(p, 1, obj(s.properties)))
  extensions(w, 31, s)
}

function namedSchemas (w: W, id: number, m: J): void {
  for (const [name, s] of Object.entries(m)) msg(w, id, n => { str(n, 1, name); msg(n, 2, v => schema(v, obj(s))) })
}

function parameter (w: W, p: J): void {
  if (typeof p.$ref === 'string') { msg(w, 2, r => str(r, 1, p.$ref)); return }
  msg(w, 1, param => {
    if (p.in === 'body') {
      msg(param, 1, b => { str(b, 1, p.description); str(b, 2, p.name); str(b, 3, p.in); bool(b, 4, p.required); if (p.schema !== undefined) msg(b, 5, s => schema(s, obj(p.schema))); extensions(b, 6, p) })
      return
    }
    // Query (3) and path (4) parameters share their first fields: required, in, description, name, then type.
    const which = p.in === 'path' ? 4 : p.in === 'header' ? 1 : 3
    msg(param, 2, nb => msg(nb, which, q => {
      bool(q, 1, p.required); str(q, 2, p.in); str(q, 3, p.description); str(q, 4, p.name)
      if (which === 3) { bool(q, 5, p.allowEmptyValue); str(q, 6, p.type); str(q, 7, p.format) } else { str(q, 5, p.type); str(q, 6, p.format) }
    }))
  })
}

function operation (w: W, o: J): void {
  strings(w, 1, o.tags); str(w, 2, o.summary); str(w, 3, o.description); str(w, 5, o.operationId)
  strings(w, 6, o.produces); strings(w, 7, o.consumes)
  if (Array.isArray(o.parameters)) for (const p of o.parameters) msg(w, 8, pi => parameter(pi, obj(p)))
  if (o.responses !== undefined) {
    msg(w, 9, rs => {
      for (const [code, r] of Object.entries(obj(o.responses))) {
        msg(rs, 1, n => { str(n, 1, code); msg(n, 2, rv => msg(rv, 1, resp => { str(resp, 1, obj(r).description); const sc = obj(r).schema; if (sc !== undefined) msg(resp, 2, si => msg(si, 1, s => schema(s, obj(sc)))) })) })
      }
    })
  }
  strings(w, 10, o.schemes)
  extensions(w, 13, o)
}

const VERBS: Array<[string, number]> = [['get', 2], ['put', 3], ['post', 4], ['delete', 5], ['options', 6], ['head', 7], ['patch', 8]]

/** The protobuf encoding of an OpenAPI v2 document. */
export function encodeOpenAPIv2 (doc: J): Buffer {
  const w = protobuf.Writer.create()
  str(w, 1, doc.swagger)
  if (doc.info !== undefined) msg(w, 2, i => { const info = obj(doc.info); str(i, 1, info.title); str(i, 2, info.version); str(i, 3, info.description) })
  msg(w, 8, paths => {
    for (const [path, item] of Object.entries(obj(doc.paths))) {
      msg(paths, 2, n => {
        str(n, 1, path)
        msg(n, 2, pi => {
          const it = obj(item)
          for (const [verb, id] of VERBS) if (it[verb] !== undefined) msg(pi, id, op => operation(op, obj(it[verb])))
          if (Array.isArray(it.parameters)) for (const p of it.parameters) msg(pi, 9, pp => parameter(pp, obj(p)))
          extensions(pi, 10, it)
        })
      })
    }
  })
  msg(w, 9, d => namedSchemas(d, 1, obj(doc.definitions)))
  extensions(w, 16, doc)
  return Buffer.from(w.finish())
}
