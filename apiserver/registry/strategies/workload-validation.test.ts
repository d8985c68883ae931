import t from 'tap'
import { defaultJob, selectorMatches, validateJob, validateReplicatedWorkload, validateServicePorts, validateWorkloadUpdate } from './workload-validation.js'

const template = (labels: Record<string, string>, spec: Record<string, unknown> = {}) => ({ metadata: { labels }, spec: { containers: [{ name: 'c', image: 'x:1' }], ...spec } })
const deploy = (spec: Record<string, unknown>) => ({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd' }, spec })

t.test('selectors match labels with matchLabels and every expression operator', async t => {
  const labels = { app: 'web', tier: 'front' }
  t.ok(selectorMatches({ matchLabels: { app: 'web' } }, labels))
  t.ok(selectorMatches({ matchExpressions: [{ key: 'tier', operator: 'In', values: ['front', 'back'] }, { key: 'x', operator: 'DoesNotExist' }] }, labels))
  t.notOk(selectorMatches({ matchExpressions: [{ key: 'app', operator: 'NotIn', values: ['web'] }] }, labels))
  t.notOk(selectorMatches({ matchExpressions: [{ key: 'x', operator: 'Exists' }] }, labels))
})

t.test('a workload whose selector does not select its template is rejected as Kubernetes words it', async t => {
  t.same(validateReplicatedWorkload(deploy({ selector: { matchLabels: { app: 'web' } }, template: template({ app: 'web' }) })), [])
  t.match(validateReplicatedWorkload(deploy({ selector: { matchLabels: { app: 'web' } }, template: template({ app: 'api' }) })),
    [{ field: 'spec.template.metadata.labels', message: /`selector` does not match template `labels`/ }])
  t.match(validateReplicatedWorkload(deploy({ template: template({ app: 'web' }) })), [{ field: 'spec.selector', message: 'Required value' }])
  t.match(validateReplicatedWorkload(deploy({ selector: { matchLabels: { app: 'web' } }, template: template({ app: 'web' }, { restartPolicy: 'Never' }) })),
    [{ field: 'spec.template.spec.restartPolicy', message: /Unsupported value: "Never": supported values: "Always"/ }])
  t.match(validateReplicatedWorkload(deploy({ selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c' }] } } })),
    [{ field: 'spec.template.spec.containers[0].image', message: 'Required value' }])
})

t.test('a Job template must not restart Always', async t => {
  t.match(validateJob({ spec: { template: template({}, { restartPolicy: 'Always' }) } }), [{ field: 'spec.template.spec.restartPolicy' }])
  t.same(validateJob({ spec: { template: template({}, { restartPolicy: 'Never' }) } }), [])
})

t.test('service ports are required, in range, and named when there are several', async t => {
  t.match(validateServicePorts({ spec: {} }), [{ field: 'spec.ports', message: 'Required value' }])
  t.same(validateServicePorts({ spec: { clusterIP: 'None' } }), [])
  t.match(validateServicePorts({ spec: { ports: [{ port: 80 }, { port: 443 }] } }), [{ field: 'spec.ports[0].name' }, { field: 'spec.ports[1].name' }])
  t.match(validateServicePorts({ spec: { ports: [{ port: 0 }] } }), [{ field: 'spec.ports[0].port', message: /between 1 and 65535/ }])
})

t.test('a workload selector is immutable', async t => {
  const old = deploy({ selector: { matchLabels: { app: 'web' } }, template: template({ app: 'web' }) })
  t.same(validateWorkloadUpdate(old, old), [])
  t.match(validateWorkloadUpdate(deploy({ selector: { matchLabels: { app: 'api' } }, template: template({ app: 'api' }) }), old), [{ field: 'spec.selector', message: /field is immutable/ }])
})

t.test('a Job gets its selector, controller labels and completions by default', async t => {
  const job: Record<string, any> = { metadata: { name: 'pi', uid: 'u-1' }, spec: { template: template({ extra: 'x' }, { restartPolicy: 'Never' }) } }
  defaultJob(job, 'u-1')
  t.same(job.spec.selector, { matchLabels: { 'batch.orch.io/controller-uid': 'u-1' } })
  t.match(job.spec.template.metadata.labels, { extra: 'x', 'batch.orch.io/controller-uid': 'u-1', 'batch.orch.io/job-name': 'pi', 'job-name': 'pi' })
  t.equal(job.spec.completions, 1)
  t.equal(job.spec.parallelism, 1)
  t.equal(job.spec.backoffLimit, 6)
  const manual: Record<string, any> = { metadata: { name: 'm' }, spec: { manualSelector: true, parallelism: 3, template: template({}) } }
  defaultJob(manual, 'u-2')
  t.equal(manual.spec.selector, undefined, 'a manual selector is left to the user')
  t.equal(manual.spec.completions, undefined, 'completions stay unset when parallelism is given')
})
