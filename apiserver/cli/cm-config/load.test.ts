import t from 'tap'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { concurrencyOf, loadControllerManagerConfig } from './load.js'

const dir = mkdtempSync(join(tmpdir(), 'cm-config-'))
const file = (name: string, text: string): string => { const p = join(dir, name); writeFileSync(p, text); return p }
/** The lines of the ConfigError a load throws ([] when it loads). */
function problems (path: string, accept?: string[]): string[] {
  try { loadControllerManagerConfig(path, accept); return [] } catch (err) { return (err as { lines: string[] }).lines }
}

t.test('a full OrchControllerManagerConfiguration loads: durations parsed, concurrency per controller', async t => {
  const p = file('ok.yaml', `apiVersion: orchcontrollermanager.config.orch.io/v1alpha1
kind: OrchControllerManagerConfiguration
Generic:
  Port: 10257
  Address: 0.0.0.0
  MinResyncPeriod: 12h0m0s
  ClientConnection: {kubeconfig: /etc/orch/cm.kubeconfig, qps: 20, burst: 30, contentType: application/json}
  LeaderElection: {leaderElect: true, leaseDuration: 15s, renewDeadline: 10s, retryPeriod: 2s, resourceLock: leases}
  Controllers: ["*", "-cronjob"]
  Debugging: {enableProfiling: false}
  LeaderMigrationEnabled: false
DeploymentController: {ConcurrentDeploymentSyncs: 3}
ReplicaSetController: {ConcurrentRSSyncs: 7}
NodeLifecycleController: {NodeMonitorGracePeriod: 20s, NodeEvictionRate: 0.1, UnhealthyZoneThreshold: 0.55}
PodGCController: {TerminatedPodGCThreshold: 100}
GarbageCollectorController: {EnableGarbageCollector: true, ConcurrentGCSyncs: 20, GCIgnoredResources: [{Group: "", Resource: events}]}
CSRSigningController: {ClusterSigningDuration: 8760h0m0s, OrchletServingSignerConfiguration: {CertFile: a, KeyFile: b}}
`)
  const { kind, config } = loadControllerManagerConfig(p)
  t.equal(kind, 'OrchControllerManagerConfiguration')
  t.equal(config.Generic.LeaderElection.leaseDuration, 15_000)
  t.equal(config.Generic.MinResyncPeriod, 12 * 3600_000)
  t.equal(config.NodeLifecycleController.NodeMonitorGracePeriod, 20_000)
  t.same(concurrencyOf(config), { deployment: 3, replicaset: 7 })
})

t.test('every problem is one line naming the file, the field as written, the value and the rule', async t => {
  const p = file('bad.yaml', `apiVersion: orchcontrollermanager.config.orch.io/v1alpha1
kind: OrchControllerManagerConfiguration
Generic: {Port: "x", Controllers: [job, nope], MinResyncPeriod: 12}
DeploymentController: {ConcurrentDeploymentSyncs: 0.5, Extra: 1}
Unknown: {}
`)
  try {
    loadControllerManagerConfig(p)
    t.fail('should have thrown')
  } catch (err) {
    const lines = (err as { lines: string[] }).lines
    t.same(lines, [
      `${p}: Generic.Port: "x": must be a 32-bit integer`,
      `${p}: Generic.MinResyncPeriod: 12: must be a duration such as 30s`,
      `${p}: DeploymentController.ConcurrentDeploymentSyncs: 0.5: must be a 32-bit integer`,
      `${p}: DeploymentController.Extra: unknown field`,
      `${p}: Unknown: unknown field`
    ])
  }
  const rules = file('rules.yaml', `apiVersion: orchcontrollermanager.config.orch.io/v1alpha1
kind: OrchControllerManagerConfiguration
Generic: {Controllers: ["*", "-nope"], LeaderElection: {leaderElect: true, leaseDuration: 5s, renewDeadline: 10s}}
JobController: {ConcurrentJobSyncs: 0}
`)
  t.same(problems(rules), [
    `${rules}: JobController.ConcurrentJobSyncs: 0: must be at least 1`,
    `${rules}: Generic.Controllers[1]: "-nope": unknown controller (known: cronjob, csrapproving, csrcleaner, csrsigning, daemonset, deployment, disruption, endpoint, endpointslice, horizontalpodautoscaling, job, nodelifecycle, podgc, replicaset, replicationcontroller, resourcequota, root-ca-cert-publisher, serviceaccount, statefulset, tokencleaner, ttlafterfinished, validatingadmissionpolicy-status-controller)`,
    `${rules}: Generic.LeaderElection.leaseDuration: must be greater than renewDeadline`
  ])
})

t.test('LeaderMigrationConfiguration and CloudControllerManagerConfiguration load and validate', async t => {
  const lm = file('lm.yaml', `apiVersion: controllermanager.config.orch.io/v1alpha1
kind: LeaderMigrationConfiguration
leaderName: cloud-provider-extraction-migration
resourceLock: leases
controllerLeaders:
- {name: route, component: "*"}
- {name: service, component: cloud-controller-manager}
`)
  t.equal(loadControllerManagerConfig(lm).config.controllerLeaders.length, 2)
  const badLm = file('lm-bad.yaml', `apiVersion: controllermanager.config.orch.io/v1alpha1
kind: LeaderMigrationConfiguration
resourceLock: configmaps
controllerLeaders: [{name: route, owner: x}]
`)
  t.same(problems(badLm), [`${badLm}: controllerLeaders[0].owner: unknown field`])
  const ccm = file('ccm.yaml', `apiVersion: cloudcontrollermanager.config.orch.io/v1alpha1
kind: CloudControllerManagerConfiguration
Generic: {Controllers: ["*"]}
NodeStatusUpdateFrequency: 5m0s
Webhook: {Webhooks: ["*"]}
NodeController: {ConcurrentNodeSyncs: 1}
`)
  t.equal(loadControllerManagerConfig(ccm).config.NodeStatusUpdateFrequency, 300_000)
  t.same(problems(ccm, ['OrchControllerManagerConfiguration']), [`${ccm}: kind: "CloudControllerManagerConfiguration": must be OrchControllerManagerConfiguration`])
  const wrongVersion = file('v.yaml', 'apiVersion: v1\nkind: LeaderMigrationConfiguration\n')
  t.same(problems(wrongVersion), [`${wrongVersion}: apiVersion: "v1": must be controllermanager.config.orch.io/v1alpha1`])
})
