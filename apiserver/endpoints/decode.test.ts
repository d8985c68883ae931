import t from 'tap'
import { checkKind, decodeBody, decodeJson, decodeYaml } from './decode.js'
import { findDuplicateKeys } from './json-duplicates.js'
import { StatusError } from '../errors/status-error.js'
import { definition } from '../../test/fixtures/memory-registry.js'

t.test('finds duplicate JSON keys with their paths', async t => {
  t.same(findDuplicateKeys('{"a":1,"a":2}'), ['a'])
  t.same(findDuplicateKeys('{"spec":{"replicas":1,"x":"\\"replicas\\"","replicas":2}}'), ['spec.replicas'])
  t.same(findDuplicateKeys('{"spec":{"containers":[{"name":"a"},{"name":"b","name":"c"}]}}'), ['spec.containers[1].name'])
  t.same(findDuplicateKeys('{"a":{"b":1},"c":{"b":1},"k\\u0041":1,"kA":2}'), ['kA'])
  t.same(findDuplicateKeys('{"x":[[1,{"y":1,"y":2}]]}'), ['x[0][1].y'])
  // values ending in escaped backslashes, and escaped quotes, end where JSON says
  t.same(findDuplicateKeys(JSON.stringify({ a: '\\', b: '"', c: '\\"x"' }).slice(0, -1) + ',"a":"q","b":1}'), ['a', 'b'])
})

t.test('finds duplicate YAML keys with their paths', async t => {
  const d = decodeYaml('metadata:\n  labels:\n    a: "1"\n    a: "2"\nspec:\n  list:\n  - n: 1\n    n: 2\n')
  t.same(d.duplicateFields, ['metadata.labels.a', 'spec.list[0].n'])
  t.same(d.object.metadata, { labels: { a: '2' } })
})

t.test('rejects malformed, non-object and multi-document bodies with 400', async t => {
  for (const f of [() => decodeJson('{'), () => decodeJson('"s"'), () => decodeJson('null'), () => decodeYaml('a: [1\n'), () => decodeYaml('- 1\n'), () => decodeYaml('a: 1\n---\nb: 1\n')]) {
    try { f(); t.fail('no error') } catch (err) { t.ok(err instanceof StatusError && err.code === 400, String(err)) }
  }
  t.same(decodeYaml('a: 1\n---\n').object, { a: 1 })
})

t.test('fills in kind and apiVersion from the endpoint and rejects others', async t => {
  const def = definition({ kind: 'Deployment', plural: 'deployments', group: 'apps' })
  const body = { object: {} as Record<string, unknown>, duplicateFields: [] }
  checkKind(body, def)
  t.same(body.object, { kind: 'Deployment', apiVersion: 'apps/v1' })
  t.throws(() => checkKind({ object: { kind: 'Pod' }, duplicateFields: [] }, def))
  t.throws(() => checkKind({ object: { apiVersion: 'apps/v1beta1' }, duplicateFields: [] }, def))
})

t.test('refuses nesting deeper than 1000 levels with 400, in JSON and YAML', async t => {
  const deep = (n: number) => '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x"},"data":' + '{"a":'.repeat(n) + '1' + '}'.repeat(n) + '}'
  t.doesNotThrow(() => decodeBody(Buffer.from(deep(990)), 'json'))
  for (const n of [1001, 200_000]) {
    let err: unknown
    try { decodeBody(Buffer.from(deep(n)), 'json') } catch (e) { err = e }
    t.match(err, { code: 400, message: /exceeded max depth/ }, `JSON ${n} deep`)
  }
  const yamlDeep = 'a: ' + '['.repeat(2000) + ']'.repeat(2000)
  let yerr: unknown
  try { decodeBody(Buffer.from(yamlDeep), 'yaml') } catch (e) { yerr = e }
  t.match(yerr, { code: 400 }, 'deep YAML')
})

t.test('a body cut short reads as Go words it: unexpected end of JSON input', async t => {
  for (const text of ['{"metadata":{"name":"z"', '{"a":', '{']) {
    let err: unknown
    try { decodeJson(text) } catch (e) { err = e }
    t.match(err, { code: 400, message: "couldn't get version/kind; json parse error: unexpected end of JSON input" }, text)
  }
})
