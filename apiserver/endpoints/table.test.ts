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
  t.same(crd.row({ metadata: { name: 'w' } }).cells, ['w', null], 'a CRD column without a value is a null cell')
  const plain = createTableConvertor(definition({ kind: 'C', plural: 'cs' }), now)
  t.same(plain.columns.map(c => [c.name, c.type]), [['Name', 'string'], ['Created At', 'date']])
  t.same(plain.row(obj).cells, ['n', '2020-01-01T00:00:00Z'])
})

t.test('a custom resource without printer columns gets Name and Age, as serveDefaultColumnsIfEmpty', async t => {
  const { createTableConvertor } = await import('./table.js')
  const { definition } = await import('../../test/fixtures/memory-registry.js')
  const now = () => Date.parse('2020-01-01T00:05:00Z')
  const cr = createTableConvertor(definition({ kind: 'W', plural: 'ws', custom: { crdName: 'ws.x', preserveUnknownFieldsAtRoot: false } }), now)
  t.same(cr.columns.map(c => [c.name, c.type, c.format]), [['Name', 'string', 'name'], ['Age', 'date', '']])
  t.same(cr.row({ metadata: { name: 'w', creationTimestamp: '2020-01-01T00:00:00Z' } }).cells, ['w', '5m'])
})

t.test('the Scale table has Name, Desired, Available and Age', async t => {
  const { createScaleTableConvertor } = await import('./table.js')
  const conv = createScaleTableConvertor(() => Date.parse('2020-01-01T00:00:30Z'))
  t.same(conv.columns.map(c => [c.name, c.type]), [['Name', 'string'], ['Desired', 'integer'], ['Available', 'integer'], ['Age', 'string']])
  const scale = { kind: 'Scale', metadata: { name: 'web', creationTimestamp: '2020-01-01T00:00:00Z' }, spec: { replicas: 3 }, status: {} }
  t.same(conv.row(scale).cells, ['web', 3, 0, '30s'])
})

// The built-in catalog against kube-apiserver 1.29's printers: column names in order, `*` marking wide-only ones.
const layouts: Array<[string, string]> = [
  ['Pod', 'Name Ready Status Restarts Age *IP *Node *Nominated Node *Readiness Gates'],
  ['Node', 'Name Status Roles Age Version *Internal-IP *External-IP *OS-Image *Kernel-Version *Container-Runtime'],
  ['Namespace', 'Name Status Age'],
  ['Service', 'Name Type Cluster-IP External-IP Port(s) Age *Selector'],
  ['ServiceAccount', 'Name Secrets Age'],
  ['Endpoints', 'Name Endpoints Age'],
  ['ConfigMap', 'Name Data Age'],
  ['Secret', 'Name Type Data Age'],
  ['Event', 'Last Seen Type Reason Object *Subobject *Source Message *First Seen *Count *Name'],
  ['PersistentVolume', 'Name Capacity Access Modes Reclaim Policy Status Claim StorageClass VolumeAttributesClass Reason Age *VolumeMode'],
  ['PersistentVolumeClaim', 'Name Status Volume Capacity Access Modes StorageClass VolumeAttributesClass Age *VolumeMode'],
  ['Deployment', 'Name Ready Up-to-date Available Age *Containers *Images *Selector'],
  ['ReplicaSet', 'Name Desired Current Ready Age *Containers *Images *Selector'],
  ['DaemonSet', 'Name Desired Current Ready Up-to-date Available Node Selector Age *Containers *Images *Selector'],
  ['StatefulSet', 'Name Ready Age *Containers *Images'],
  ['Job', 'Name Completions Duration Age *Containers *Images *Selector'],
  ['CronJob', 'Name Schedule Timezone Suspend Active Last Schedule Age *Containers *Images *Selector'],
  ['Lease', 'Name Holder Age'],
  ['CustomResourceDefinition', 'Name Created At']
]
const MULTI = ['Last Seen', 'Nominated Node', 'Readiness Gates', 'First Seen', 'Access Modes', 'Reclaim Policy', 'Node Selector', 'Last Schedule', 'Created At']
const split = (s: string): string[] => {
  for (const m of MULTI) s = s.replaceAll(m, m.replace(' ', '_'))
  return s.split(' ').map(w => w.replace('_', ' '))
}
for (const [kind, want] of layouts) {
  t.test(`${kind} columns match kube-apiserver 1.29`, async t => {
    const { createTableConvertor } = await import('./table.js')
    const { builtinDefinitions } = await import('../schema/builtin/catalog.js')
    const def = builtinDefinitions().find(d => d.kind === kind)!
    const conv = createTableConvertor(def, () => 0)
    t.same(conv.columns.map(c => (c.priority === 1 ? '*' : '') + c.name), split(want))
  })
}

t.test('every computed column of the catalog names an existing printer', async t => {
  const { builtinDefinitions } = await import('../schema/builtin/catalog.js')
  const { COLUMN_PRINTERS } = await import('./printers.js')
  const missing = builtinDefinitions().flatMap(d => d.printerColumns.filter(c => c.printer !== undefined && COLUMN_PRINTERS[c.printer] === undefined).map(c => `${d.kind}.${c.name}`))
  t.same(missing, [])
})

t.test('built-in cells print Go zero values instead of empty cells', async t => {
  const { createTableConvertor } = await import('./table.js')
  const { builtinDefinitions } = await import('../schema/builtin/catalog.js')
  const now = () => Date.parse('2020-01-01T00:01:00Z')
  const byKind = (k: string) => createTableConvertor(builtinDefinitions().find(d => d.kind === k)!, now)
  const meta = { name: 'x', creationTimestamp: '2020-01-01T00:00:00Z' }
  const deploy = { metadata: meta, spec: { replicas: 2, selector: { matchLabels: { app: 'x' } }, template: { spec: { containers: [{ name: 'c', image: 'busybox' }] } } } }
  t.same(byKind('Deployment').row(deploy).cells, ['x', '0/2', 0, 0, '60s', 'c', 'busybox', 'app=x'])
  t.same(byKind('Lease').row({ metadata: meta, spec: {} }).cells, ['x', '', '60s'])
  t.same(byKind('Pod').row({ metadata: meta, spec: { containers: [{ name: 'c' }] }, status: { phase: 'Pending' } }).cells,
    ['x', '0/1', 'Pending', '0', '60s', '<none>', '<none>', '<none>', '<none>'])
  const ev = { metadata: { name: 'e1', creationTimestamp: '2020-01-01T00:00:00Z' }, type: 'Normal', reason: 'Started', message: ' hi ', involvedObject: { kind: 'Pod', name: 'web', fieldPath: 'spec.containers{c}' }, source: { component: 'orchlet' }, firstTimestamp: '2020-01-01T00:00:00Z', lastTimestamp: '2020-01-01T00:00:30Z', count: 2 }
  t.same(byKind('Event').row(ev).cells, ['30s', 'Normal', 'Started', 'pod/web', 'spec.containers{c}', 'orchlet', 'hi', '60s', 2, 'e1'])
})
