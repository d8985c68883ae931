// An HPA scales a Deployment of WebAssembly pods up while they burn CPU and back down once they idle, through kubectl.
import t from 'tap'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { compileFixture } from '../agent/runtime/wasm/fixtures/compile.js'
import { buildWasmImageLayout, layoutTar } from '../agent/runtime/oci/layout-writer.js'
import { runKubectl, startOrch } from './orch-process.js'

const NODE = 'hpa-node'
const dir = mkdtempSync(join(tmpdir(), 'orch-hpa-e2e-'))
const dataDir = join(dir, 'data')
mkdirSync(join(dataDir, 'orchlet', 'wasm', 'import'), { recursive: true })
writeFileSync(join(dataDir, 'orchlet', 'wasm', 'import', 'tool.tar'), layoutTar(buildWasmImageLayout({ module: await compileFixture('tool'), refName: 'localhost/e2e/tool:1' })))
const orchletConfig = join(dir, 'orchlet.yaml')
writeFileSync(orchletConfig, 'apiVersion: orchlet.config.orch.io/v1beta1\nkind: OrchletConfiguration\nport: 0\nreadOnlyPort: 0\nhealthzPort: 0\n')
// The HPAController settings of the controller manager: a short sync period and CPU initialization period for the test.
const cmConfig = join(dir, 'cm.yaml')
writeFileSync(cmConfig, `apiVersion: orchcontrollermanager.config.orch.io/v1alpha1
kind: OrchControllerManagerConfiguration
HPAController:
  HorizontalPodAutoscalerSyncPeriod: 2s
  HorizontalPodAutoscalerTolerance: 0.1
  HorizontalPodAutoscalerCPUInitializationPeriod: 1s
  HorizontalPodAutoscalerInitialReadinessDelay: 1s
  HorizontalPodAutoscalerDownscaleStabilizationWindow: 5m0s
`)
const orch = await startOrch(dataDir, 60_000, ['--node-name', NODE, '--orchlet-config', orchletConfig, '--controller-manager-config', cmConfig])
t.teardown(async () => { await orch.stop(); rmSync(dir, { recursive: true, force: true }) })

function kubectl (...args: string[]): ReturnType<typeof runKubectl> {
  return runKubectl(orch.kubeconfig, join(dir, 'cache'), args)
}

async function until<T> (what: string, f: () => Promise<T | undefined>, ms = 90_000): Promise<T> {
  const deadline = Date.now() + ms
  for (;;) {
    const v = await f()
    if (v !== undefined) return v
    if (Date.now() > deadline) {
      const hpa = await kubectl('get', 'hpa', 'burn', '-o', 'yaml')
      throw new Error(`timed out waiting for ${what}\n${hpa.stdout}\n${orch.logs().slice(-2000)}`)
    }
    await new Promise(resolve => setTimeout(resolve, 500))
  }
}

/** Without spec.replicas, which the HPA owns once it runs. */
function deployment (args: string[]): string {
  const p = join(dir, 'deploy.yaml')
  writeFileSync(p, `apiVersion: apps/v1
kind: Deployment
metadata: {name: burn, namespace: default}
spec:
  selector: {matchLabels: {app: burn}}
  template:
    metadata: {labels: {app: burn}}
    spec:
      nodeName: ${NODE}
      runtimeClassName: wasm
      terminationGracePeriodSeconds: 1
      containers:
      - name: main
        image: localhost/e2e/tool:1
        command: [tool]
        args: ${JSON.stringify(args)}
        resources: {requests: {cpu: 20m}}
`)
  return p
}

interface Hpa { spec: { maxReplicas: number }; status?: { currentReplicas?: number; desiredReplicas?: number; currentMetrics?: Array<{ resource?: { current: { averageUtilization?: number } } }>; conditions?: Array<{ type: string; status: string; reason: string }> } }

async function hpa (): Promise<Hpa | undefined> {
  const r = await kubectl('get', 'hpa', 'burn', '-o', 'json')
  return r.code === 0 ? JSON.parse(r.stdout) as Hpa : undefined
}

async function replicas (): Promise<number> {
  return Number((await kubectl('get', 'deploy', 'burn', '-o', 'jsonpath={.spec.replicas}')).stdout)
}

t.test('the HPA scales the Deployment up under CPU load and back down when the load stops', async t => {
  await until('the node to be Ready', async () => / Ready /.test((await kubectl('get', 'nodes', '--no-headers')).stdout) ? true : undefined)
  const created = await kubectl('apply', '-f', deployment(['spin']))
  t.equal(created.code, 0, created.stderr)
  const hpaFile = join(dir, 'hpa.yaml')
  writeFileSync(hpaFile, `apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: burn, namespace: default}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: burn}
  minReplicas: 1
  maxReplicas: 3
  metrics:
  - type: Resource
    resource: {name: cpu, target: {type: Utilization, averageUtilization: 50}}
  behavior:
    scaleDown:
      stabilizationWindowSeconds: 5
`)
  const made = await kubectl('apply', '-f', hpaFile)
  t.equal(made.code, 0, made.stderr)

  const up = await until('the scale-up to 3', async () => (await replicas()) === 3 ? await hpa() : undefined)
  t.ok((up.status?.currentMetrics?.[0]?.resource?.current.averageUtilization ?? 0) > 50, 'utilization above the target was measured')
  t.match(up.status?.conditions?.find(c => c.type === 'ScalingActive'), { status: 'True', reason: 'ValidMetricFound' })
  t.match(up.status?.conditions?.find(c => c.type === 'AbleToScale'), { status: 'True' })
  const table = await kubectl('get', 'hpa', 'burn')
  t.match(table.stdout, /^NAME\s+REFERENCE\s+TARGETS\s+MINPODS\s+MAXPODS\s+REPLICAS\s+AGE\n/)
  t.match(table.stdout, /\nburn\s+Deployment\/burn\s+cpu: (\d+%|<unknown>)\/50%\s+1\s+3\s+\d+/)
  const events = await kubectl('get', 'events', '--field-selector', 'involvedObject.kind=HorizontalPodAutoscaler', '-o', 'jsonpath={.items[*].message}')
  t.match(events.stdout, /New size: \d; reason: cpu resource utilization \(percentage of request\) above target/)

  // The load stops: the pods now sleep. The short scale-down window lets the count fall back to the minimum.
  const idle = await kubectl('patch', 'deploy', 'burn', '-p', JSON.stringify({ spec: { template: { spec: { containers: [{ name: 'main', args: ['tick', '1000'] }] } } } }))
  t.equal(idle.code, 0, idle.stderr)
  const down = await until('the scale-down to 1', async () => (await replicas()) === 1 ? await hpa() : undefined)
  t.ok((down.status?.currentMetrics?.[0]?.resource?.current.averageUtilization ?? 100) < 50, 'utilization below the target was measured')
  const all = await kubectl('get', 'events', '--field-selector', 'involvedObject.kind=HorizontalPodAutoscaler', '-o', 'jsonpath={.items[*].message}')
  t.match(all.stdout, /New size: 1; reason: All metrics below target/)
})
