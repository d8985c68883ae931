// Idle RSS of `orch up` (API server, controllers, scheduler and orchlet in one process), next to a bare `node` process
// idling in the same run, then the RSS of the same server holding CONFIGMAPS ConfigMaps and PODS pods.
// Each round starts `orch up` (bin/orch.js: the build in dist/ when there is one, else the sources through tsx) on a new
// data directory, waits until /readyz answers and the local Node is Ready, idles IDLE_S seconds, and reads VmRSS,
// (also read 30 s into the window: V8's memory reducer shrinks the heap left by start-up some 35-45 s after start, so a
// 30-second reading lands on either side of it; the default window of 60 s ends past it)
// RssAnon and RssFile from /proc/PID/status, for it and for the peer. The last round then creates the ConfigMaps (1 KiB
// each) and the pods (WebAssembly pods, `runtimeClassName: wasm`, a fixture module sleeping in poll_oneoff, imported
// from an OCI layout in the orchlet's import folder), idling IDLE_S and reading RSS after the ConfigMaps and again once
// every pod is Running.
// BASELINE_ROOT=DIR (another checkout, built) adds its `orch up` to every round, started and measured the same way beside
// ours: a before/after in one run.
// Run: npx tsx benchmarks/idle-rss.ts   (ROUNDS=4, IDLE_S=60, CONFIGMAPS=10000, PODS=100; LOADED=0 skips the loaded part)
// Prints one JSON line; writes benchmarks/results/idle-rss.json.

import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Agent, request } from 'undici'
import { loadKubeconfig } from '../apiserver/client/kubeconfig.js'
import { compileFixture } from '../agent/runtime/wasm/fixtures/compile.js'
import { buildWasmImageLayout, layoutTar } from '../agent/runtime/oci/layout-writer.js'

const ROUNDS = Number(process.env.ROUNDS ?? 4)
const IDLE_S = Number(process.env.IDLE_S ?? 60)
const CONFIGMAPS = Number(process.env.CONFIGMAPS ?? 10_000)
const PODS = Number(process.env.PODS ?? 100)
const LOADED = process.env.LOADED !== '0'
const NODE_NAME = 'idle-rss-node'
const IMAGE = 'localhost/bench/tool:1'
const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const BASELINE_ROOT = process.env.BASELINE_ROOT

interface Rss { totalMiB: number, anonMiB: number, fileMiB: number }

function rssOf (pid: number): Rss {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  const kb = (field: string): number => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0)
  const mib = (n: number): number => Math.round(n / 102.4) / 10
  return { totalMiB: mib(kb('VmRSS')), anonMiB: mib(kb('RssAnon')), fileMiB: mib(kb('RssFile')) }
}

const sleep = async (ms: number): Promise<void> => await new Promise(resolve => setTimeout(resolve, ms))

/**
 * Idles `seconds`, sampling each pid's VmRSS every second: the highest sample of the window (start-up garbage lingers
 * until V8's memory reducer runs) and the sample at 30 s, beside the reading at its end.
 */
async function idle (seconds: number, pids: number[]): Promise<Array<{ peak: number, at30s: number }>> {
  const seen = pids.map(() => ({ peak: 0, at30s: 0 }))
  for (let s = 1; s <= seconds; s++) {
    await sleep(1000)
    pids.forEach((pid, i) => {
      const now = rssOf(pid).totalMiB
      seen[i].peak = Math.max(seen[i].peak, now)
      if (s === 30) seen[i].at30s = now
    })
  }
  return seen
}

interface Up { child: ChildProcess, dataDir: string, url: string, dispatcher: Agent, logs: () => string }

async function startUp (image: Buffer, checkout = root): Promise<Up> {
  const dataDir = mkdtempSync(join(tmpdir(), 'orch-idle-rss-'))
  const importDir = join(dataDir, 'orchlet', 'wasm', 'import')
  mkdirSync(importDir, { recursive: true })
  writeFileSync(join(importDir, 'tool.tar'), image)
  const child = spawn(process.execPath, [join(checkout, 'bin/orch.js'), 'up', '--data-dir', dataDir, '--port', '0', '--node-name', NODE_NAME, '--log-level', 'warn'],
    { cwd: checkout, stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  child.stdout!.on('data', (d: Buffer) => { output += d.toString() })
  child.stderr!.on('data', (d: Buffer) => { output += d.toString() })
  const kubeconfig = join(dataDir, 'kubeconfig')
  for (let i = 0; !existsSync(kubeconfig); i++) {
    if (child.exitCode !== null || i > 1200) throw new Error(`orch up did not start:\n${output}`)
    await sleep(50)
  }
  const c = loadKubeconfig(kubeconfig)
  const dispatcher = new Agent({ connect: { ca: c.caPem, cert: c.clientCertPem, key: c.clientKeyPem }, connections: 16 })
  return { child, dataDir, url: /server: (\S+)/.exec(readFileSync(kubeconfig, 'utf8'))?.[1] ?? '', dispatcher, logs: () => output }
}

async function getJson (up: Up, path: string): Promise<{ status: number, body: any }> {
  const res = await request(up.url + path, { dispatcher: up.dispatcher })
  const text = await res.body.text()
  return { status: res.statusCode, body: text.startsWith('{') ? JSON.parse(text) : text }
}

async function until (what: string, timeoutMs: number, check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!(await check().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await sleep(250)
  }
}

async function ready (up: Up): Promise<void> {
  await until('/readyz', 60_000, async () => (await getJson(up, '/readyz')).status === 200)
  await until('the node to be Ready', 120_000, async () => {
    const node = (await getJson(up, `/api/v1/nodes/${NODE_NAME}`)).body
    return node.status?.conditions?.some((c: { type: string, status: string }) => c.type === 'Ready' && c.status === 'True') === true
  })
}

async function stopUp (up: Up): Promise<void> {
  const exited = new Promise(resolve => up.child.once('exit', resolve))
  if (up.child.exitCode === null) up.child.kill('SIGTERM')
  await Promise.race([exited, sleep(20_000)])
  if (up.child.exitCode === null) up.child.kill('SIGKILL')
  await up.dispatcher.destroy()
  rmSync(up.dataDir, { recursive: true, force: true })
}

/** Creates `count` objects at `path` from `make`, `parallel` requests at a time. */
async function createAll (up: Up, path: string, count: number, parallel: number, make: (i: number) => unknown): Promise<void> {
  let next = 0
  await Promise.all(Array.from({ length: parallel }, async () => {
    while (next < count) {
      const i = next++
      const res = await request(up.url + path, { dispatcher: up.dispatcher, method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(make(i)) })
      const text = await res.body.text()
      if (res.statusCode !== 201) throw new Error(`create ${i} at ${path}: ${res.statusCode} ${text}`)
    }
  }))
}

async function loaded (up: Up, peer: ChildProcess): Promise<Record<string, unknown>> {
  const payload = 'x'.repeat(1024)
  const t0 = performance.now()
  await createAll(up, '/api/v1/namespaces/default/configmaps', CONFIGMAPS, 16, i => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `cm-${i}` }, data: { v: payload } }))
  const configMapsS = (performance.now() - t0) / 1000
  // The ConfigMaps alone first: the pods' worker threads (one per WebAssembly container) would hide them.
  await sleep(IDLE_S * 1000)
  const configMapsRss = rssOf(up.child.pid!)
  await createAll(up, '/api/v1/namespaces/default/pods', PODS, 4, i => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: `pod-${i}` },
    spec: {
      runtimeClassName: 'wasm',
      restartPolicy: 'Never',
      containers: [{ name: 'main', image: IMAGE, command: ['tool'], args: ['tick', '600000'], resources: { limits: { memory: '16Mi' } } }]
    }
  }))
  const t1 = performance.now()
  let phases: Record<string, number> = {}
  await until(`${PODS} pods Running`, 600_000, async () => {
    const list = (await getJson(up, '/api/v1/namespaces/default/pods')).body
    phases = {}
    for (const p of list.items as Array<{ status?: { phase?: string } }>) phases[p.status?.phase ?? 'None'] = (phases[p.status?.phase ?? 'None'] ?? 0) + 1
    return phases.Running === PODS
  }).catch(err => { process.stderr.write(`${(err as Error).message}: ${JSON.stringify(phases)}\n`) })
  const podsS = (performance.now() - t1) / 1000
  await sleep(IDLE_S * 1000)
  return { configMaps: CONFIGMAPS, pods: PODS, phases, configMapsCreateS: Number(configMapsS.toFixed(1)), podsRunningS: Number(podsS.toFixed(1)), configMapsRss, rss: rssOf(up.child.pid!), peerRss: rssOf(peer.pid!) }
}

function summary (values: number[]): { min: number, median: number } {
  const s = [...values].sort((a, b) => a - b)
  return { min: s[0], median: s[Math.floor(s.length / 2)] }
}

async function main (): Promise<void> {
  const image = layoutTar(buildWasmImageLayout({ module: await compileFixture('tool'), refName: IMAGE }))
  const rounds: Array<{ up: Rss, peer: Rss, baseline?: Rss, upPeakMiB: number, upAt30sMiB: number, baselinePeakMiB?: number, baselineAt30sMiB?: number, readyS: number }> = []
  let loadedResult: Record<string, unknown> | undefined
  for (let r = 0; r < ROUNDS; r++) {
    // The peer: what Node itself costs, idling beside the server through the same window.
    const peer = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1 << 30)'], { stdio: 'ignore' })
    // With a baseline, who starts first alternates (the first to start is the first to reach V8's memory reducer).
    const baseFirst = BASELINE_ROOT !== undefined && r % 2 === 1
    const early = baseFirst ? await startUp(image, BASELINE_ROOT) : undefined
    const t0 = performance.now()
    const up = await startUp(image)
    const base = BASELINE_ROOT === undefined ? undefined : early ?? await startUp(image, BASELINE_ROOT)
    try {
      await ready(up)
      const readyS = (performance.now() - t0) / 1000
      if (base !== undefined) await ready(base)
      const seen = await idle(IDLE_S, [up.child.pid!, ...(base === undefined ? [] : [base.child.pid!])])
      rounds.push({
        up: rssOf(up.child.pid!), peer: rssOf(peer.pid!), ...(base === undefined ? {} : { baseline: rssOf(base.child.pid!) }),
        upPeakMiB: seen[0].peak, upAt30sMiB: seen[0].at30s,
        ...(base === undefined ? {} : { baselinePeakMiB: seen[1].peak, baselineAt30sMiB: seen[1].at30s }),
        readyS: Number(readyS.toFixed(1))
      })
      if (base !== undefined) await stopUp(base)
      process.stderr.write(`round ${r}: ${JSON.stringify(rounds[rounds.length - 1])}\n`)
      if (LOADED && r === ROUNDS - 1) {
        loadedResult = await loaded(up, peer)
        process.stderr.write(`loaded: ${JSON.stringify(loadedResult)}\n`)
      }
    } catch (err) {
      process.stderr.write(up.logs().slice(-4000))
      throw err
    } finally {
      await stopUp(up)
      if (base !== undefined && base.child.exitCode === null) await stopUp(base)
      peer.kill()
    }
  }
  const field = (pick: (x: (typeof rounds)[number]) => number): { min: number, median: number } => summary(rounds.map(pick))
  const result = {
    benchmark: 'idle-rss',
    node: process.version,
    build: existsSync(join(root, 'dist/apiserver/cli/main.js')) ? 'dist' : 'tsx',
    rounds: ROUNDS,
    idleS: IDLE_S,
    idle: {
      totalMiB: field(x => x.up.totalMiB), at30sMiB: field(x => x.upAt30sMiB), peakMiB: field(x => x.upPeakMiB), anonMiB: field(x => x.up.anonMiB), fileMiB: field(x => x.up.fileMiB),
      peerTotalMiB: field(x => x.peer.totalMiB), peerAnonMiB: field(x => x.peer.anonMiB), peerFileMiB: field(x => x.peer.fileMiB),
      ...(BASELINE_ROOT === undefined ? {} : {
        baselineTotalMiB: field(x => x.baseline!.totalMiB), baselineAt30sMiB: field(x => x.baselineAt30sMiB!), baselinePeakMiB: field(x => x.baselinePeakMiB!), baselineAnonMiB: field(x => x.baseline!.anonMiB), baselineFileMiB: field(x => x.baseline!.fileMiB)
      })
    },
    loaded: loadedResult,
    perRound: rounds
  }
  console.log(JSON.stringify(result))
  writeFileSync(join(root, 'benchmarks/results/idle-rss.json'), JSON.stringify(result, null, 2) + '\n')
}

await main()
