import t from 'tap'
import { createResolver, referencedDefinitions, schemaAtPath, SchemaRefError, unresolvedRefs } from './resolve.js'
import type { SchemaDefinitions } from './types.js'

const defs: SchemaDefinitions = {
  A: { type: 'object', properties: { b: { $ref: 'B' }, list: { type: 'array', items: { $ref: 'B' } }, m: { type: 'object', additionalProperties: { $ref: 'B' } } } },
  B: { type: 'object', properties: { name: { type: 'string' }, self: { $ref: 'B' } } },
  Alias: { $ref: 'B' },
  Loop1: { $ref: 'Loop2' },
  Loop2: { $ref: 'Loop1' },
}

t.test('follows $ref chains and caches the result per node', async (t) => {
  const r = createResolver(defs)
  const node = { $ref: 'Alias' }
  t.equal(r.resolve(node), defs.B)
  t.equal(r.resolve(node), r.resolve(node))
})

t.test('lays $ref siblings over the target', async (t) => {
  const r = createResolver(defs)
  t.same(r.resolve({ $ref: 'B', default: {} }).default, {})
  t.equal(defs.B.default, undefined)
})

t.test('missing and looping refs throw a typed error', async (t) => {
  const r = createResolver(defs)
  t.throws(() => r.resolve({ $ref: 'Nope' }), SchemaRefError)
  t.throws(() => r.resolve({ $ref: 'Loop1' }), { code: 'SCHEMA_ERR_UNRESOLVED_REF' })
})

t.test('finds schemas by path through properties, items and maps', async (t) => {
  const def = { schema: { $ref: 'A' }, definitions: defs }
  t.equal(schemaAtPath(def, ['b', 'self', 'name'])?.type, 'string')
  t.equal(schemaAtPath(def, ['list', 0, 'name'])?.type, 'string')
  t.equal(schemaAtPath(def, ['list', '*', 'self', 'name'])?.type, 'string')
  t.equal(schemaAtPath(def, ['m', 'anykey', 'name'])?.type, 'string')
  t.equal(schemaAtPath(def, ['b', 'missing']), undefined)
})

t.test('lists referenced and unresolved definitions', async (t) => {
  t.same(referencedDefinitions({ $ref: 'A' }, defs), ['A', 'B'])
  t.same(unresolvedRefs({ schema: { properties: { x: { $ref: 'Gone' }, y: { $ref: 'B' } } }, definitions: defs }), ['Gone'])
})
