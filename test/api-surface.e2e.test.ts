// The v1.29 API surface through kubectl: api-resources under both spellings, a Helm chart's kind of output applied
// unmodified, autoscaling v1/v2 of one object, a deprecated version's warning, and --runtime-config.
import t from 'tap'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { runKubectl, startOrch } from './orch-process.js'

const dir = mkdtempSync(join(tmpdir(), 'orch-api-surface-'))
t.teardown(() => rmSync(dir, { recursive: true, force: true }))

// What `helm template` writes for a typical web chart (plus the cluster-scoped kinds charts often carry).
const CHART = `---
apiVersion: v1
kind: ServiceAccount
metadata: {name: web, labels: {app.kubernetes.io/name: web, helm.sh/chart: web-0.1.0, app.kubernetes.io/managed-by: Helm}}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: web-reader}
rules:
- apiGroups: [""]
  resources: [pods, services]
  verbs: [get, list, watch]
- apiGroups: [networking.k8s.io]
  resources: [ingresses]
  verbs: [get]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: web-reader}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: web-reader}
subjects:
- {kind: ServiceAccount, name: web, namespace: default}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: web-config}
rules:
- {apiGroups: [""], resources: [configmaps], verbs: [get]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: web-config}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: web-config}
subjects:
- {kind: ServiceAccount, name: web}
---
apiVersion: v1
kind: Service
metadata: {name: web}
spec:
  selector: {app.kubernetes.io/name: web}
  ports: [{name: http, port: 80, targetPort: http}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  selector: {matchLabels: {app.kubernetes.io/name: web}}
  template:
    metadata: {labels: {app.kubernetes.io/name: web}}
    spec:
      serviceAccountName: web
      containers:
      - name: web
        image: nginx:1.25
        ports: [{name: http, containerPort: 80}]
        resources: {requests: {cpu: 100m}}
---
apiVersion: networking.k8s.io/v1
kind: IngressClass
metadata: {name: nginx, annotations: {ingressclass.kubernetes.io/is-default-class: "true"}}
spec: {controller: k8s.io/ingress-nginx}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: web}
spec:
  ingressClassName: nginx
  tls: [{hosts: [web.example.com], secretName: web-tls}]
  rules:
  - host: web.example.com
    http:
      paths:
      - {path: /, pathType: Prefix, backend: {service: {name: web, port: {name: http}}}}
---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: web}
spec:
  podSelector: {matchLabels: {app.kubernetes.io/name: web}}
  policyTypes: [Ingress]
  ingress: [{from: [{namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: ingress-nginx}}}], ports: [{port: 80}]}]
---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: web}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  minReplicas: 2
  maxReplicas: 10
  metrics:
  - {type: Resource, resource: {name: cpu, target: {type: Utilization, averageUtilization: 75}}}
  - {type: Resource, resource: {name: memory, target: {type: Utilization, averageUtilization: 80}}}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: web}
spec: {minAvailable: 1, selector: {matchLabels: {app.kubernetes.io/name: web}}}
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: standard}
provisioner: rancher.io/local-path
volumeBindingMode: WaitForFirstConsumer
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: web-critical}
value: 100000
---
apiVersion: node.k8s.io/v1
kind: RuntimeClass
metadata: {name: gvisor}
handler: runsc
`

t.test('kubectl sees the v1.29 API surface under both spellings and applies a chart unmodified', async t => {
  const orch = await startOrch(join(dir, 'data'), 60_000, ['--runtime-config', 'resource.k8s.io/v1alpha2=true,networking.k8s.io/v1alpha1=false'], 'apiserver')
  t.teardown(() => orch.stop())
  const k = async (...args: string[]) => await runKubectl(orch.kubeconfig, join(dir, 'cache'), args)

  const res = await k('api-resources', '--no-headers')
  t.equal(res.code, 0, res.stderr)
  const rows = res.stdout.split('\n').map(l => l.trim().split(/\s+/))
  const has = (name: string, groupVersion: string) => rows.some(r => r[0] === name && r.includes(groupVersion))
  for (const [name, gvs] of Object.entries({
    ingresses: ['networking.k8s.io/v1', 'networking.orch.io/v1'], ingressclasses: ['networking.k8s.io/v1'],
    networkpolicies: ['networking.k8s.io/v1'], storageclasses: ['storage.k8s.io/v1', 'storage.orch.io/v1'],
    csidrivers: ['storage.k8s.io/v1'], csinodes: ['storage.k8s.io/v1'], csistoragecapacities: ['storage.k8s.io/v1'],
    volumeattachments: ['storage.k8s.io/v1'], horizontalpodautoscalers: ['autoscaling/v2'], events: ['v1', 'events.k8s.io/v1'],
    flowschemas: ['flowcontrol.apiserver.k8s.io/v1'], prioritylevelconfigurations: ['flowcontrol.apiserver.k8s.io/v1'],
    apiservices: ['apiregistration.k8s.io/v1'], priorityclasses: ['scheduling.k8s.io/v1'], runtimeclasses: ['node.k8s.io/v1'],
    leases: ['coordination.k8s.io/v1'], certificatesigningrequests: ['certificates.k8s.io/v1'], roles: ['rbac.authorization.k8s.io/v1'],
    customresourcedefinitions: ['apiextensions.k8s.io/v1'], validatingwebhookconfigurations: ['admissionregistration.k8s.io/v1'],
    tokenreviews: ['authentication.k8s.io/v1'], subjectaccessreviews: ['authorization.k8s.io/v1'], endpointslices: ['discovery.k8s.io/v1'],
    resourceclaims: ['resource.k8s.io/v1alpha2'],
  })) for (const gv of gvs) t.ok(has(name, gv), `${name} ${gv}`)
  t.notOk(rows.some(r => r[0] === 'servicecidrs'), 'networking v1alpha1 stays off')

  const chart = join(dir, 'chart.yaml')
  writeFileSync(chart, CHART)
  const applied = await k('apply', '-f', chart)
  t.equal(applied.code, 0, applied.stderr)
  t.match(applied.stdout, /ingress.networking.k8s.io\/web created/)
  t.match(applied.stdout, /horizontalpodautoscaler.autoscaling\/web created/)
  const again = await k('apply', '-f', chart)
  t.equal(again.code, 0, again.stderr)
  t.match(again.stdout, /networkpolicy.networking.k8s.io\/web unchanged/)

  const v1 = await k('get', 'horizontalpodautoscalers.v1.autoscaling', 'web', '-o', 'jsonpath={.spec.targetCPUUtilizationPercentage}')
  t.equal(v1.stdout, '75', v1.stderr)
  const hpa = await k('get', 'hpa', 'web')
  t.equal(hpa.code, 0, hpa.stderr)
  t.match(hpa.stdout, /web\s+Deployment\/web\s+cpu: <unknown>\/75%, memory: <unknown>\/80%\s+2\s+10/)
  const hpaV1 = await k('get', 'horizontalpodautoscalers.v1.autoscaling', 'web')
  t.match(hpaV1.stdout, /web\s+Deployment\/web\s+cpu: <unknown>\/75%\s+2\s+10/, 'v1 prints its one target')

  const tables = await k('get', 'ingress,storageclass,ingressclass', '-o', 'wide')
  t.equal(tables.code, 0, tables.stderr)
  t.match(tables.stdout, /ingress\.networking\.k8s\.io\/web\s+nginx\s+web\.example\.com\s+80, 443/)
  t.match(tables.stdout, /storageclass\.storage\.k8s\.io\/standard\s+rancher\.io\/local-path\s+Delete\s+WaitForFirstConsumer\s+false/)
  const sorted = await k('get', 'priorityclasses', '--sort-by=.value', '-o', 'name')
  t.equal(sorted.code, 0, sorted.stderr)
  t.match(sorted.stdout, 'priorityclass.scheduling.k8s.io/web-critical')
  const explained = await k('explain', 'ingresses.spec.defaultBackend')
  t.equal(explained.code, 0, explained.stderr)
  const flows = await k('get', 'flowschemas.v1beta3.flowcontrol.apiserver.k8s.io')
  t.match(flows.stderr, 'Warning: flowcontrol.apiserver.k8s.io/v1beta3 FlowSchema is deprecated in v1.29+, unavailable in v1.32+; use flowcontrol.apiserver.k8s.io/v1 FlowSchema')
  const scrape = await k('get', '--raw', '/metrics')
  t.equal(scrape.code, 0, scrape.stderr)
  t.match(scrape.stdout, 'apiserver_requested_deprecated_apis{group="flowcontrol.apiserver.k8s.io",version="v1beta3",resource="flowschemas",subresource="",removed_release="1.32"} 1',
    'the deprecated request is counted in /metrics')
  const removed = await k('get', '--raw', '/apis/batch/v1beta1/cronjobs')
  t.not(removed.code, 0)
  t.match(removed.stderr, /NotFound|not find/)
})
