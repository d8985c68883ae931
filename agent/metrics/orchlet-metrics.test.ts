// A real standalone orchlet running a WebAssembly static pod with a readiness probe, scraped on its four endpoints.
import t from 'tap'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Agent, request } from 'undici'
import { compileFixture } from '../runtime/wasm/fixtures/compile.js'
import { buildWasmImageLayout, layoutTar } from '../runtime/oci/layout-writer.js'
import { loadOrchletConfig } from '../config/load.js'
import { runAgent } from '../agent.js'

const IMAGE = 'localhost/orch-test/tool:1'

/** Sample value by name and labels (a subset), or undefined. */
function sample (text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line)
    if (m === null || m[1] !== name) continue
    const got = Object.fromEntries([...(m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map(x => [x[1], x[2]]))
    if (Object.entries(labels).every(([k, v]) => got[k] === v)) return Number(m[3])
  }
  return undefined
}

t.test('the orchlet serves /metrics, /metrics/probes, /metrics/resource and /metrics/cadvisor with the kubelet\'s names', async t => {
  const root = mkdtempSync(join(tmpdir(), 'orchlet-metrics-'))
  t.teardown(() => rmSync(root, { recursive: true, force: true }))
  const probeTarget = createServer((_req, res) => { res.writeHead(200); res.end() })
  await new Promise<void>(resolve => probeTarget.listen(0, '127.0.0.1', resolve))
  t.teardown(() => probeTarget.close())
  const probePort = (probeTarget.address() as { port: number }).port

  mkdirSync(join(root, 'wasm', 'import'), { recursive: true })
  writeFileSync(join(root, 'wasm', 'import', 'tool.tar'), layoutTar(buildWasmImageLayout({ module: await compileFixture('tool'), refName: IMAGE })))
  mkdirSync(join(root, 'manifests'))
  writeFileSync(join(root, 'manifests', 'spin.json'), JSON.stringify({
    apiVersion: 'v1', kind: 'Pod', metadata: { name: 'spin', namespace: 'default' },
    spec: { containers: [{ name: 'main', image: IMAGE, command: ['tool'], args: ['spin'], readinessProbe: { httpGet: { host: '127.0.0.1', port: probePort }, periodSeconds: 1 } }] }
  }))
  const file = join(root, 'orchlet.yaml')
  writeFileSync(file, `apiVersion: orchlet.config.orch.io/v1beta1
kind: OrchletConfiguration
address: 127.0.0.1
port: 0
readOnlyPort: 0
healthzPort: 0
staticPodPath: ${join(root, 'manifests')}
`)
  const config = await loadOrchletConfig(['--config', file, '--root-dir', root, '--cert-dir', join(root, 'pki'), '--hostname-override', 'metrics-node',
    // No containerd (the shared one is left alone): the pod runs on the built-in WebAssembly runtime.
    '--container-runtime-endpoint', `unix://${join(root, 'no-containerd.sock')}`], {}, { logger: { warn () {} } })
  const quiet = (): void => {}
  const orchlet = await runAgent(config, { logger: { info: quiet, warn: quiet, error: quiet }, relistMs: 100 })
  t.teardown(async () => { await orchlet.stop({ shutdown: true }) })
  const dispatcher = new Agent({ connect: { rejectUnauthorized: false } })
  t.teardown(() => dispatcher.close())
  const scrape = async (path: string): Promise<string> => {
    const r = await request(`https://127.0.0.1:${orchlet.ports().port!}${path}`, { dispatcher })
    t.equal(r.statusCode, 200, path)
    t.match(r.headers['content-type'], /^text\/plain; version=0\.0\.4/)
    return await r.body.text()
  }

  // Wait until the pod runs, its probe passed and its container has CPU time to report.
  let probes = ''
  let resource = ''
  for (let i = 0; i < 150; i++) {
    probes = await scrape('/metrics/probes')
    resource = await scrape('/metrics/resource')
    if ((sample(probes, 'prober_probe_total', { probe_type: 'Readiness', result: 'successful' }) ?? 0) >= 1 &&
      sample(resource, 'container_cpu_usage_seconds_total', { container: 'main' }) !== undefined) break
    await new Promise(resolve => setTimeout(resolve, 200))
  }
  const pod = { pod: 'spin-metrics-node', namespace: 'default' }
  t.ok((sample(probes, 'prober_probe_total', { probe_type: 'Readiness', result: 'successful', container: 'main', ...pod }) ?? 0) >= 1, 'readiness probes counted')
  t.match(probes, '# HELP prober_probe_total [ALPHA] Cumulative number of a liveness, readiness or startup probe for a container by result.\n# TYPE prober_probe_total counter\n')

  t.ok((sample(resource, 'node_cpu_usage_seconds_total') ?? 0) > 0, 'node CPU')
  t.ok((sample(resource, 'node_memory_working_set_bytes') ?? 0) > 0, 'node memory')
  t.ok((sample(resource, 'container_cpu_usage_seconds_total', { container: 'main', ...pod }) ?? -1) >= 0, 'the WebAssembly container\'s CPU')
  t.ok((sample(resource, 'container_memory_working_set_bytes', { container: 'main', ...pod }) ?? 0) > 0, 'the WebAssembly container\'s memory')
  t.ok((sample(resource, 'container_start_time_seconds', { container: 'main', ...pod }) ?? 0) > 1.7e9)
  t.ok((sample(resource, 'pod_memory_working_set_bytes', pod) ?? 0) > 0)
  t.equal(sample(resource, 'resource_scrape_error'), 0)
  t.match(resource, '# TYPE node_cpu_usage_seconds_total counter\n')
  t.match(resource, '# HELP scrape_error [ALPHA] (Deprecated from 1.29) ')
  t.match(resource, /^scrape_error 0$/m, 'deprecated in 1.29: still shown, with its note')

  const cadvisor = await scrape('/metrics/cadvisor')
  t.match(cadvisor, '# HELP container_cpu_usage_seconds_total Cumulative cpu time consumed in seconds.\n# TYPE container_cpu_usage_seconds_total counter\n')
  t.match(cadvisor, /^container_memory_working_set_bytes\{container="main",id="[^"]+",image="localhost\/orch-test\/tool:1",name="[^"]+",namespace="default",pod="spin-metrics-node"\} \d+/m)

  const main = await scrape('/metrics')
  t.ok((sample(main, 'kubelet_runtime_operations_total', { operation_type: 'run_podsandbox' }) ?? 0) >= 1)
  t.ok((sample(main, 'kubelet_runtime_operations_total', { operation_type: 'container_stats' }) ?? 0) >= 1)
  t.ok((sample(main, 'kubelet_runtime_operations_duration_seconds_count', { operation_type: 'start_container' }) ?? 0) >= 1)
  t.match(main, '# TYPE kubelet_runtime_operations_errors_total counter\n')
  t.equal(sample(main, 'kubelet_pod_start_duration_seconds_count'), 1, 'the pod started once')
  t.match(main, '# HELP kubelet_evictions [ALPHA] Cumulative number of pod evictions by eviction signal\n')
  t.equal(sample(main, 'kubelet_running_pods'), 1)
  t.equal(sample(main, 'kubelet_running_containers', { container_state: 'running' }), 1)
  t.match(main, /^process_resident_memory_bytes \d+/m)
  t.match(main, /^nodejs_heap_size_used_bytes \d+/m)
})
