import t from 'tap'
import { builtinDefinitions, builtinSchemaDefinitions } from './catalog.js'
import { schemaAtPath, unresolvedRefs } from '../resolve.js'

const byKind = (kind: string) => {
  const def = builtinDefinitions().find((d) => d.kind === kind)
  if (def === undefined) throw new Error(`no ${kind}`)
  return def
}

t.test('serves the workload and cluster kinds with Kubernetes names', async (t) => {
  const defs = builtinDefinitions()
  const names = defs.map((d) => `${d.group}/${d.version}/${d.kind}`)
  t.same(names.sort(), [
    '/v1/ConfigMap', '/v1/Endpoints', '/v1/Event', '/v1/LimitRange', '/v1/Namespace', '/v1/Node', '/v1/PersistentVolume',
    '/v1/PersistentVolumeClaim', '/v1/Pod', '/v1/PodTemplate', '/v1/ReplicationController', '/v1/ResourceQuota',
    '/v1/Secret', '/v1/Service', '/v1/ServiceAccount',
    'admissionregistration.orch.io/v1/MutatingWebhookConfiguration', 'admissionregistration.orch.io/v1/ValidatingWebhookConfiguration',
    'admissionregistration.orch.io/v1beta1/ValidatingAdmissionPolicy', 'admissionregistration.orch.io/v1beta1/ValidatingAdmissionPolicyBinding',
    'apiextensions.orch.io/v1/CustomResourceDefinition', 'apps/v1/ControllerRevision', 'apps/v1/DaemonSet', 'apps/v1/Deployment',
    'apps/v1/ReplicaSet', 'apps/v1/StatefulSet',
    'authentication.orch.io/v1/SelfSubjectReview', 'authentication.orch.io/v1/TokenReview',
    'authentication.orch.io/v1alpha1/SelfSubjectReview', 'authentication.orch.io/v1beta1/SelfSubjectReview',
    'authorization.orch.io/v1/LocalSubjectAccessReview', 'authorization.orch.io/v1/SelfSubjectAccessReview',
    'authorization.orch.io/v1/SelfSubjectRulesReview', 'authorization.orch.io/v1/SubjectAccessReview',
    'autoscaling/v2/HorizontalPodAutoscaler',
    'batch/v1/CronJob', 'batch/v1/Job', 'certificates.orch.io/v1/CertificateSigningRequest', 'coordination.orch.io/v1/Lease',
    'discovery.orch.io/v1/EndpointSlice', 'node.orch.io/v1/RuntimeClass', 'policy/v1/PodDisruptionBudget',
    'rbac.authorization.orch.io/v1/ClusterRole', 'rbac.authorization.orch.io/v1/ClusterRoleBinding',
    'rbac.authorization.orch.io/v1/Role', 'rbac.authorization.orch.io/v1/RoleBinding', 'scheduling.orch.io/v1/PriorityClass',
  ])
  for (const d of defs) {
    t.equal(d.singular, d.kind.toLowerCase(), `${d.kind} singular`)
    t.equal(d.listKind, `${d.kind}List`)
    t.equal(d.storageVersion, d.version)
    if (d.virtual === true) t.same(d.verbs, ['create'], `${d.kind} is create-only`)
    else t.ok(d.verbs.includes('watch') && d.verbs.includes('deletecollection'), `${d.kind} verbs`)
  }
})

t.test('the reviews are create-only kinds, namespaced only for LocalSubjectAccessReview', async (t) => {
  const reviews = builtinDefinitions().filter((d) => d.virtual === true)
  t.same(reviews.filter((d) => d.namespaced).map((d) => d.kind), ['LocalSubjectAccessReview'])
  t.same(byKind('SubjectAccessReview').plural, 'subjectaccessreviews')
  t.same(reviews.map((d) => d.printerColumns.length + Object.keys(d.subresources).length), reviews.map(() => 0))
})

t.test('every kind schema resolves and declares apiVersion, kind, metadata', async (t) => {
  for (const d of builtinDefinitions()) {
    t.same(unresolvedRefs(d), [], `${d.kind} refs resolve`)
    for (const f of ['apiVersion', 'kind', 'metadata']) t.ok(schemaAtPath(d, [f]), `${d.kind}.${f}`)
    t.notOk(JSON.stringify(d.schema).includes('k8s'), `${d.kind} carries no k8s names`)
    t.notMatch(JSON.stringify(d.definitions), /"description":"/, `${d.kind} carries no descriptions`)
  }
})

t.test('short names, categories, scope and subresources match kubectl expectations', async (t) => {
  t.same(byKind('Pod').shortNames, ['po'])
  t.same(byKind('Pod').categories, ['all'])
  t.equal(byKind('Namespace').namespaced, false)
  t.equal(byKind('Namespace').nameValidation, 'label')
  t.equal(byKind('Service').nameValidation, 'dns1035')
  t.equal(byKind('ConfigMap').nameValidation, 'subdomain')
  t.same(byKind('CustomResourceDefinition').shortNames, ['crd', 'crds'])
  t.same(byKind('Deployment').subresources, {
    status: true,
    scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas', labelSelectorPath: '.spec.selector' },
  })
  t.same(byKind('ConfigMap').subresources, {})
  t.equal(byKind('Lease').group, 'coordination.orch.io')
  t.equal(byKind('Lease').allowCreateOnUpdate, true)
  t.equal(byKind('Pod').allowCreateOnUpdate, false)
  t.same(byKind('Namespace').printerColumns, [{ name: 'Status', type: 'string', jsonPath: '.status.phase' },
    { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' }])
  t.same(byKind('Pod').printerColumns.find((c) => c.name === 'Node'), { name: 'Node', type: 'string', jsonPath: '', priority: 1, printer: 'podNode' })
  t.same(byKind('CustomResourceDefinition').categories, ['api-extensions'])
  t.same(builtinDefinitions().filter((d) => d.tracksGeneration === true).map((d) => d.kind),
    ['Deployment', 'ReplicaSet', 'DaemonSet', 'StatefulSet', 'Job', 'CronJob', 'HorizontalPodAutoscaler', 'ReplicationController', 'PodDisruptionBudget',
      'CustomResourceDefinition', 'ValidatingAdmissionPolicy', 'ValidatingAdmissionPolicyBinding'])
})

t.test('each call returns fresh objects', async (t) => {
  const a = byKind('Pod')
  a.shortNames.push('x')
  a.definitions['io.orch.api.core.v1.PodSpec'].properties!.restartPolicy.default = 'Never'
  const b = byKind('Pod')
  t.same(b.shortNames, ['po'])
  t.equal(b.definitions['io.orch.api.core.v1.PodSpec'].properties!.restartPolicy.default, 'Always')
})

t.test('Go-coded defaults are laid over the derived schemas', async (t) => {
  const pod = byKind('Pod')
  t.equal(schemaAtPath(pod, ['spec', 'restartPolicy'])?.default, 'Always')
  t.equal(schemaAtPath(pod, ['spec', 'containers', '*', 'terminationMessagePath'])?.default, '/dev/termination-log')
  t.equal(schemaAtPath(pod, ['spec', 'containers', '*', 'ports', '*', 'protocol'])?.default, 'TCP')
  t.same(schemaAtPath(pod, ['spec', 'securityContext'])?.default, {})
  t.equal(schemaAtPath(byKind('Deployment'), ['spec', 'replicas'])?.default, 1)
  t.equal(schemaAtPath(byKind('Service'), ['spec', 'type'])?.default, 'ClusterIP')
})

t.test('derived markers are orch spellings with structural special types', async (t) => {
  const defs = builtinSchemaDefinitions()
  t.same(defs['io.orch.apimachinery.pkg.util.intstr.IntOrString'], { 'x-orch-int-or-string': true })
  t.same(defs['io.orch.apimachinery.pkg.apis.meta.v1.Time'], { type: 'string', format: 'date-time', nullable: true })
  t.equal(defs['io.orch.apimachinery.pkg.runtime.RawExtension']['x-orch-preserve-unknown-fields'], true)
  const ports = defs['io.orch.api.core.v1.Container'].properties!.ports
  t.equal(ports['x-orch-list-type'], 'map')
  t.same(ports['x-orch-list-map-keys'], ['containerPort', 'protocol'])
  t.equal(defs['io.orch.api.core.v1.PodSpec'].properties!.containers['x-orch-patch-merge-key'], 'name')
  const props = defs['io.orch.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps'].properties!
  t.ok(props['x-orch-preserve-unknown-fields'] && props['x-kubernetes-preserve-unknown-fields'])
})
