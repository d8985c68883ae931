import t from 'tap'
import { buildOpenAPIv2, buildOpenAPIv3GroupVersion, buildOpenAPIv3Paths, schemaName } from './openapi.js'
import { builtinDefinitions } from './builtin/catalog.js'
import { definitionsFromCRD } from './crd.js'

type Obj = Record<string, any>
const defs = builtinDefinitions()

function allRefs (node: unknown, out: string[] = []): string[] {
  if (Array.isArray(node)) node.forEach((n) => allRefs(n, out))
  else if (node !== null && typeof node === 'object') {
    for (const [k, v] of Object.entries(node)) {
      if (k === '$ref' && typeof v === 'string') out.push(v)
      else allRefs(v, out)
    }
  }
  return out
}

/** kubectl explain v1.29's lookup: GVK from an operation on the resource path, then the schema carrying that GVK. */
function explainLookup (doc: Obj, prefix: string, version: string, resource: string, namespaced: boolean): Obj | undefined {
  const path = namespaced ? `${prefix}/${version}/namespaces/{namespace}/${resource}` : `${prefix}/${version}/${resource}`
  const gvk = doc.paths[path]?.get?.['x-kubernetes-group-version-kind']
  if (gvk === undefined) return undefined
  return Object.values(doc.components.schemas as Record<string, Obj>).find((s) =>
    (s['x-kubernetes-group-version-kind'] ?? []).some((g: Obj) => g.group === gvk.group && g.version === gvk.version && g.kind === gvk.kind))
}

function follow (doc: Obj, schema: Obj, field: string): Obj | undefined {
  const resolve = (s: Obj): Obj => {
    const ref = s.$ref ?? s.allOf?.[0]?.$ref
    return ref === undefined ? s : doc.components.schemas[ref.replace('#/components/schemas/', '')]
  }
  let s = resolve(schema)
  if (s.items !== undefined) s = resolve(s.items)
  const next = s.properties?.[field]
  return next === undefined ? undefined : next
}

t.test('kubectl explain pods.spec.containers finds its schema in the v1 document', async (t) => {
  const doc = buildOpenAPIv3GroupVersion(defs, '', 'v1') as Obj
  t.equal(doc.openapi, '3.0.0')
  const pod = explainLookup(doc, '/api', 'v1', 'pods', true)
  t.ok(pod, 'Pod schema found by GVK')
  const spec = follow(doc, pod!, 'spec')
  const containers = follow(doc, spec!, 'containers')
  t.equal(containers?.type, 'array')
  t.ok(follow(doc, containers!, 'name'), 'containers[].name reachable')
  t.ok(explainLookup(doc, '/api', 'v1', 'nodes', false), 'cluster-scoped Node found')
  const apps = buildOpenAPIv3GroupVersion(defs, 'apps', 'v1') as Obj
  t.ok(explainLookup(apps, '/apis/apps', 'v1', 'deployments', true))
  const lease = buildOpenAPIv3GroupVersion(defs, 'coordination.orch.io', 'v1') as Obj
  t.ok(explainLookup(lease, '/apis/coordination.orch.io', 'v1', 'leases', true))
})

t.test('PATCH of every kind offers fieldValidation so kubectl validates server-side', async (t) => {
  for (const d of defs.filter((d) => d.virtual !== true)) {
    const doc = buildOpenAPIv3GroupVersion(defs, d.group, d.version) as Obj
    const patches = Object.values(doc.paths as Record<string, Obj>).map((p) => p.patch).filter((op) => op?.['x-kubernetes-group-version-kind']?.kind === d.kind)
    t.ok(patches.length > 0, `${d.kind} has a PATCH operation`)
    t.ok(patches.every((op) => op.parameters.some((p: Obj) => p.name === 'fieldValidation' && p.in === 'query')), `${d.kind} PATCH takes fieldValidation`)
  }
})

t.test('a create-only kind has only POST on its collection and no list schema', async (t) => {
  const doc = buildOpenAPIv3GroupVersion(defs, 'authorization.orch.io', 'v1') as Obj
  const paths = doc.paths as Record<string, Obj>
  t.same(Object.keys(paths).sort(), ['/apis/authorization.orch.io/v1/namespaces/{namespace}/localsubjectaccessreviews',
    '/apis/authorization.orch.io/v1/selfsubjectaccessreviews', '/apis/authorization.orch.io/v1/selfsubjectrulesreviews',
    '/apis/authorization.orch.io/v1/subjectaccessreviews'])
  const sar = paths['/apis/authorization.orch.io/v1/subjectaccessreviews']
  t.same(Object.keys(sar).filter((k) => k !== 'parameters'), ['post'])
  t.ok(sar.post.parameters.some((p: Obj) => p.name === 'fieldValidation'), 'kubectl create validates server-side')
  const schemas = Object.keys((doc.components as Obj).schemas as Obj)
  t.ok(schemas.some((n) => n.endsWith('.SubjectAccessReview')))
  t.notOk(schemas.some((n) => n.endsWith('.SubjectAccessReviewList')))
})

t.test('every $ref resolves inside the v2 and v3 documents', async (t) => {
  const v2 = buildOpenAPIv2(defs) as Obj
  t.equal(v2.swagger, '2.0')
  const missing2 = allRefs(v2).filter((r) => v2.definitions[r.replace('#/definitions/', '')] === undefined)
  t.same([...new Set(missing2)], [])
  for (const [g, v] of [['', 'v1'], ['apps', 'v1'], ['batch', 'v1'], ['coordination.orch.io', 'v1'], ['apiextensions.orch.io', 'v1']]) {
    const v3 = buildOpenAPIv3GroupVersion(defs, g, v) as Obj
    const missing3 = allRefs(v3).filter((r) => v3.components.schemas[r.replace('#/components/schemas/', '')] === undefined)
    t.same([...new Set(missing3)], [], `${g}/${v}`)
  }
})

t.test('v2 carries both GVK spellings and Kubernetes-spelled merge markers', async (t) => {
  const v2 = buildOpenAPIv2(defs) as Obj
  const deploy = v2.definitions['io.orch.api.apps.v1.Deployment']
  t.same(deploy['x-kubernetes-group-version-kind'], [{ group: 'apps', kind: 'Deployment', version: 'v1' }])
  t.same(deploy['x-orch-group-version-kind'], deploy['x-kubernetes-group-version-kind'])
  const containers = v2.definitions['io.orch.api.core.v1.PodSpec'].properties.containers
  t.equal(containers['x-kubernetes-patch-merge-key'], 'name')
  t.equal(containers['x-kubernetes-patch-strategy'], 'merge')
  t.same(v2.definitions['io.orch.apimachinery.pkg.util.intstr.IntOrString'], { 'x-orch-int-or-string': true, 'x-kubernetes-int-or-string': true, type: 'string', format: 'int-or-string' })
  t.same(v2.definitions['io.orch.apimachinery.pkg.api.resource.Quantity'], { type: 'string' })
  t.ok(v2.definitions['io.orch.api.core.v1.PodList'], 'list kinds are published')
  t.ok(v2.paths['/api/v1/namespaces/{namespace}/pods/{name}/status'], 'status subresource path')
  t.ok(v2.paths['/apis/apps/v1/namespaces/{namespace}/deployments/{name}/scale'], 'scale subresource path')
})

t.test('/openapi/v3 lists each group-version with a content hash', async (t) => {
  const { paths } = buildOpenAPIv3Paths(defs)
  t.same(Object.keys(paths), ['api/v1', 'apis/admissionregistration.orch.io/v1', 'apis/admissionregistration.orch.io/v1beta1', 'apis/apiextensions.orch.io/v1', 'apis/apps/v1', 'apis/authentication.orch.io/v1',
    'apis/authentication.orch.io/v1alpha1', 'apis/authentication.orch.io/v1beta1', 'apis/authorization.orch.io/v1', 'apis/autoscaling/v2', 'apis/batch/v1', 'apis/certificates.orch.io/v1', 'apis/coordination.orch.io/v1',
    'apis/discovery.orch.io/v1', 'apis/node.orch.io/v1', 'apis/policy/v1', 'apis/rbac.authorization.orch.io/v1', 'apis/scheduling.orch.io/v1'])
  t.match(paths['api/v1'].serverRelativeURL, /^\/openapi\/v3\/api\/v1\?hash=[0-9A-F]{128}$/)
  t.equal(buildOpenAPIv3Paths(defs).paths['api/v1'].serverRelativeURL, paths['api/v1'].serverRelativeURL, 'stable')
})

t.test('custom kinds are published under reversed-group names with their own schema', async (t) => {
  const [cr] = definitionsFromCRD({
    metadata: { name: 'widgets.example.com' },
    spec: {
      group: 'example.com', scope: 'Cluster', names: { plural: 'widgets', kind: 'Widget' },
      versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', description: 'Desired widget.', properties: { size: { type: 'integer' } } } } } } }],
    },
  })
  t.equal(schemaName(cr, 'Widget'), 'com.example.v1.Widget')
  const doc = buildOpenAPIv3GroupVersion([...defs, cr], 'example.com', 'v1') as Obj
  const w = explainLookup(doc, '/apis/example.com', 'v1', 'widgets', false)
  t.equal(w?.properties.spec.description, 'Desired widget.')
  t.same(w?.properties.metadata, { $ref: '#/components/schemas/io.orch.apimachinery.pkg.apis.meta.v1.ObjectMeta' })
})

t.test('CertificateSigningRequests document their approval subresource', async (t) => {
  const v2 = buildOpenAPIv2(defs) as Obj
  const approval = v2.paths['/apis/certificates.orch.io/v1/certificatesigningrequests/{name}/approval']
  t.same(Object.keys(approval).filter(k => k !== 'parameters').sort(), ['get', 'patch', 'put'])
  t.match(approval.put.operationId, /CertificateSigningRequestApproval$/)
})
