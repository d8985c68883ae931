// A create's Update entry is written by a walk of its own (created-fields.ts): it must equal what the general
// comparison records, for built-in kinds with and without a status subresource, keyed lists and system metadata.
import t from 'tap'
import { builtinDefinitions } from '../../schema/builtin/catalog.js'
import { FieldManager } from './field-manager.js'
import { mergeTypeOf } from './schema-types.js'

function managerFor (kind: string, apiVersion: string): FieldManager {
  const def = builtinDefinitions().find(d => d.kind === kind)
  if (def === undefined) throw new Error(`no ${kind}`)
  return new FieldManager({ type: mergeTypeOf(def), apiVersion, statusSubresource: def.subresources.status === true, now: () => new Date(0) })
}

const objects: Array<[string, string, Record<string, unknown>]> = [
  ['Deployment', 'apps/v1', {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web', namespace: 'default', uid: 'u', generation: 1, creationTimestamp: null, labels: { app: 'web' }, finalizers: ['a', 'a'] },
    spec: {
      replicas: 2,
      selector: { matchLabels: { app: 'web' } },
      template: {
        metadata: { labels: { app: 'web' } },
        spec: {
          containers: [
            { name: 'app', image: 'nginx', ports: [{ containerPort: 80 }, { containerPort: 80, protocol: 'UDP' }], env: [{ name: 'A', value: '1' }, { name: 'A', value: '2' }], args: ['-v'] },
            { name: 'side', image: 'proxy', resources: {} }
          ],
          volumes: []
        }
      }
    },
    status: { replicas: 0 }
  }],
  ['Pod', 'v1', {
    apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'default' }, spec: { containers: [{ name: 'c', image: 'busybox' }] }, status: { phase: 'Pending' }
  }],
  ['ConfigMap', 'v1', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: 'default', annotations: { a: 'b' } }, data: { k: 'v', e: '' } }],
  ['ConfigMap', 'v1', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'only-system-fields', namespace: 'default' } }]
]

for (const [kind, apiVersion, obj] of objects) {
  t.test(`a ${kind} create records what the general comparison records (${(obj.metadata as { name: string }).name})`, async t => {
    const fm = managerFor(kind, apiVersion)
    const created = structuredClone(obj)
    fm.update(undefined, created, 'kubectl-create')
    // An empty live object takes the general path (compare against it, filter, encode).
    const general = structuredClone(obj)
    fm.update({}, general, 'kubectl-create')
    t.same((created.metadata as Record<string, unknown>).managedFields, (general.metadata as Record<string, unknown>).managedFields)
    t.equal(JSON.stringify((created.metadata as Record<string, unknown>).managedFields), JSON.stringify((general.metadata as Record<string, unknown>).managedFields), 'same key order')
  })
}

t.test('a create records no system metadata and, with a status subresource, no status', async t => {
  const fm = managerFor('Pod', 'v1')
  const pod = structuredClone(objects[1][2])
  fm.update(undefined, pod, 'm')
  const [entry] = (pod.metadata as { managedFields: Array<{ fieldsV1: Record<string, any> }> }).managedFields
  t.same(Object.keys(entry.fieldsV1), ['f:spec'], 'metadata holds only system fields; status belongs to /status')
  t.same(Object.keys(entry.fieldsV1['f:spec']['f:containers']['k:{"name":"c"}']), ['.', 'f:image', 'f:name'])
})
