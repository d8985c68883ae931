import t from 'tap'
import { applyDefaults } from './defaults.js'
import { builtinDefinitions } from './builtin/catalog.js'
import type { ResourceDefinition, StructuralSchema } from './types.js'

const kinds = builtinDefinitions()
const kind = (k: string): ResourceDefinition => kinds.find((d) => d.kind === k) as ResourceDefinition
const custom = (schema: StructuralSchema): ResourceDefinition => ({
  ...kind('ConfigMap'), schema, definitions: {}, custom: { crdName: 'x.example.com', preserveUnknownFieldsAtRoot: false },
})

t.test('defaults a Pod as Kubernetes does', async (t) => {
  const pod = { spec: { containers: [{ name: 'a', image: 'nginx', ports: [{ containerPort: 80 }] }] } }
  applyDefaults(kind('Pod'), pod)
  t.match(pod.spec, {
    restartPolicy: 'Always', dnsPolicy: 'ClusterFirst', schedulerName: 'default-scheduler',
    terminationGracePeriodSeconds: 30, securityContext: {},
    containers: [{ terminationMessagePath: '/dev/termination-log', terminationMessagePolicy: 'File', ports: [{ protocol: 'TCP' }] }],
  })
  t.notOk('imagePullPolicy' in pod.spec.containers[0], 'imagePullPolicy is left to the pod strategy')
})

t.test('defaults a Deployment and its pod template', async (t) => {
  const d = { spec: { selector: {}, template: { spec: { containers: [{ name: 'a' }] } } } } as Record<string, any>
  applyDefaults(kind('Deployment'), d)
  t.match(d.spec, {
    replicas: 1, revisionHistoryLimit: 10, progressDeadlineSeconds: 600,
    strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: '25%', maxSurge: '25%' } },
    template: { spec: { restartPolicy: 'Always' } },
  })
})

t.test('keeps values that are set, and does not create absent parents', async (t) => {
  const svc = { spec: { type: 'NodePort' } } as Record<string, any>
  applyDefaults(kind('Service'), svc)
  t.same(svc.spec, { type: 'NodePort', sessionAffinity: 'None' })
  const bare = {} as Record<string, any>
  applyDefaults(kind('Service'), bare)
  t.same(bare, {})
})

t.test('null counts as absent for built-ins and for non-nullable custom fields', async (t) => {
  const d = { spec: { replicas: null, selector: {}, template: {} } } as Record<string, any>
  applyDefaults(kind('Deployment'), d)
  t.equal(d.spec.replicas, 1)
  const def = custom({ type: 'object', properties: { a: { type: 'string', default: 'x' }, b: { type: 'string', nullable: true, default: 'y' } } })
  const obj = { a: null, b: null }
  applyDefaults(def, obj)
  t.same(obj, { a: 'x', b: null })
})

t.test('defaults are copied and defaulted in turn', async (t) => {
  const def = custom({
    type: 'object',
    properties: {
      spec: {
        type: 'object',
        default: {},
        properties: { inner: { type: 'object', default: { a: 1 }, properties: { a: { type: 'integer' }, b: { type: 'string', default: 'z' } } } },
      },
    },
  })
  const one = {} as Record<string, any>
  const two = {} as Record<string, any>
  applyDefaults(def, one)
  applyDefaults(def, two)
  t.same(one, { spec: { inner: { a: 1, b: 'z' } } })
  one.spec.inner.a = 2
  t.equal(two.spec.inner.a, 1)
  t.same((def.schema.properties!.spec.properties!.inner.default), { a: 1 })
})
