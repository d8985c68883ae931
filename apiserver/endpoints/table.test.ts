import t from 'tap'
import { compileJsonPath } from './jsonpath.js'
import { humanDuration } from './table.js'

t.test('evaluates printer-column JSONPath forms', async t => {
  const pod = { spec: { nodeName: 'n1', containers: [{ name: 'a' }, { name: 'b' }] }, status: { conditions: [{ type: 'Init', status: 'False' }, { type: 'Ready', status: 'True' }] }, metadata: { labels: { 'app.io/x': 'y' } } }
  t.same(compileJsonPath('.spec.nodeName')(pod), ['n1'])
  t.same(compileJsonPath('{.spec.containers[*].name}')(pod), ['a', 'b'])
  t.same(compileJsonPath('.spec.containers[-1].name')(pod), ['b'])
  t.same(compileJsonPath('.status.conditions[?(@.type=="Ready")].status')(pod), ['True'])
  t.same(compileJsonPath(".metadata.labels['app.io/x']")(pod), ['y'])
  t.same(compileJsonPath('.spec.missing.deeper')(pod), [])
  t.throws(() => compileJsonPath('.a[?(@.x > 1)]'))
})

t.test('prints ages as Kubernetes does', async t => {
  const s = 1000
  t.equal(humanDuration(45 * s), '45s')
  t.equal(humanDuration(200 * s), '3m20s')
  t.equal(humanDuration(30 * 60 * s), '30m')
  t.equal(humanDuration(5 * 3600 * s), '5h')
  t.equal(humanDuration(20 * 3600 * s), '20h')
  t.equal(humanDuration(51 * 3600 * s), '2d3h')
  t.equal(humanDuration(-5 * s), '<invalid>')
})

t.test('adds Age after a built-in kind\'s columns, keeps a CRD\'s columns as declared', async t => {
  const { createTableConvertor } = await import('./table.js')
  const { definition } = await import('../../test/fixtures/memory-registry.js')
  const now = () => Date.parse('2020-01-01T00:05:00Z')
  const obj = { metadata: { name: 'n', creationTimestamp: '2020-01-01T00:00:00Z' }, status: { phase: 'Active' } }
  const ns = createTableConvertor(definition({ kind: 'Namespace', plural: 'namespaces', printerColumns: [{ name: 'Status', type: 'string', jsonPath: '.status.phase' }] }), now)
  t.same(ns.columns.map(c => [c.name, c.type]), [['Name', 'string'], ['Status', 'string'], ['Age', 'string']])
  t.same(ns.row(obj).cells, ['n', 'Active', '5m'])
  const crd = createTableConvertor(definition({ kind: 'W', plural: 'ws', custom: { crdName: 'ws.x', preserveUnknownFieldsAtRoot: false }, printerColumns: [{ name: 'Phase', type: 'string', jsonPath: '.status.phase' }] }), now)
  t.same(crd.columns.map(c => c.name), ['Name', 'Phase'])
  const plain = createTableConvertor(definition({ kind: 'C', plural: 'cs' }), now)
  t.same(plain.columns.map(c => [c.name, c.type]), [['Name', 'string'], ['Created At', 'date']])
  t.same(plain.row(obj).cells, ['n', '2020-01-01T00:00:00Z'])
})
