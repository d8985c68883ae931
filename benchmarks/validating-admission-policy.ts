// Benchmark: what ValidatingAdmissionPolicy costs a create. An in-process API server on a real LMDB store creates
// ConfigMaps with no admission, with the plugin and 10 policies that match other kinds, and with 10 that match
// (each one validation with a variable and a messageExpression, evaluated in the sandbox thread pool), and with one
// local HTTPS validating webhook that allows everything.
// Run: npx tsx benchmarks/validating-admission-policy.ts   (REQUESTS=2000, CONCURRENCY=16, POOL=2, ROUNDS=3, SETTLE_MS=1000)
// Prints one JSON line and writes benchmarks/results/validating-admission-policy.json. Per matching policy: server
// time from throughput (perMatchingPolicyMicros) and process CPU (perMatchingPolicyCpuMicros, steadier when the
// machine is shared); loadAverage tells how busy the machine was. BASELINE=<dir of another checkout> adds a fifth
// scenario each round, the matching policies on that checkout's sandbox pool (sandbox/pool.ts), so the per-policy
// figures before and after a sandbox change come from the same rounds (`baseline`).

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { pino } from 'pino'
import { Pool } from 'undici'
import { openLmdbStore } from '../apiserver/storage/lmdb/index.js'
import { createRegistry } from '../apiserver/registry/registry.js'
import { createApiServer } from '../apiserver/server.js'
import type { WriteAdmission } from '../apiserver/registry/admission.js'
import type { RequestContext } from '../apiserver/registry/types.js'
import { createSandboxPool } from '../sandbox/pool.js'
import { createValidatingAdmissionPolicyPlugin } from '../apiserver/admission/vap/plugin.js'
import { createValidatingWebhookPlugin } from '../apiserver/admission/webhooks/index.js'
import { startWebhookServer, testCa } from '../apiserver/admission/webhooks/testing.js'

const REQUESTS = Number(process.env.REQUESTS ?? 2000)
const CONCURRENCY = Number(process.env.CONCURRENCY ?? 16)
const POOL = Number(process.env.POOL ?? 2)
const ROUNDS = Number(process.env.ROUNDS ?? 3)
const WARMUP = Number(process.env.WARMUP ?? 1000)
/** A pause after each scenario: the sandbox threads of the one before end and their heaps go before the next is measured. */
const SETTLE_MS = Number(process.env.SETTLE_MS ?? 1000)
const settle = async (): Promise<void> => { await new Promise(resolve => setTimeout(resolve, SETTLE_MS)) }
const G = 'admissionregistration.orch.io'
const logger = pino({ level: 'silent' })
const admin = (): RequestContext => ({ user: { username: 'bench', groups: ['system:masters'] }, dryRun: false, fieldValidation: 'Strict', warnings: [] })

type Scenario = 'none' | 'nonMatching' | 'matching' | 'webhook'
const BASELINE = process.env.BASELINE
const baselinePool: typeof createSandboxPool | undefined = BASELINE ? (await import(resolve(BASELINE, 'sandbox/pool.ts'))).createSandboxPool : undefined

async function measure (scenario: Scenario, createPool: typeof createSandboxPool = createSandboxPool): Promise<{ perSecond: number, p50Ms: number, p99Ms: number, cpuMicrosPerRequest: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'orch-bench-vap-'))
  const pool = createPool({ size: POOL })
  const holder: { a?: WriteAdmission } = {}
  const store = await openLmdbStore({ path: dir })
  const registry = createRegistry({ store, logger, policyExpressions: pool, admission: scenario === 'none' ? [] : [{ admit: async a => await holder.a?.admit(a) }] })
  await registry.start()
  const plugin = createValidatingAdmissionPolicyPlugin({ registry, evaluator: pool })
  holder.a = plugin.validating
  await plugin.start()
  const webhooks = createValidatingWebhookPlugin({ evaluator: pool, logger })
  const webhook = scenario === 'webhook' ? await startWebhookServer(await testCa(), () => ({ allowed: true })) : undefined
  if (webhook !== undefined) {
    holder.a = webhooks
    await webhooks.start(registry)
    await registry.handler(G, 'v1', 'validatingwebhookconfigurations')!.create(admin(), '', { duplicateFields: [], object: {
      apiVersion: `${G}/v1`, kind: 'ValidatingWebhookConfiguration', metadata: { name: 'bench' },
      webhooks: [{ name: 'bench.orch.io', clientConfig: { url: webhook.url, caBundle: webhook.caBundle }, sideEffects: 'None', admissionReviewVersions: ['v1'],
        rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }] }]
    } })
    await new Promise(resolve => setTimeout(resolve, 300))
  }
  if (scenario === 'nonMatching' || scenario === 'matching') {
    const resource = scenario === 'matching' ? 'configmaps' : 'secrets'
    for (let i = 0; i < 10; i++) {
      await registry.handler(G, 'v1beta1', 'validatingadmissionpolicies')!.create(admin(), '', { duplicateFields: [], object: {
        apiVersion: `${G}/v1beta1`, kind: 'ValidatingAdmissionPolicy', metadata: { name: `p${i}` },
        spec: {
          matchConstraints: { resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: [resource] }] },
          variables: [{ name: 'n', expression: 'object.metadata.name' }],
          validations: [{ expression: `size(variables.n) < ${100 + i}`, messageExpression: "'name too long: ' + variables.n" }]
        }
      } })
      await registry.handler(G, 'v1beta1', 'validatingadmissionpolicybindings')!.create(admin(), '', { duplicateFields: [], object: {
        apiVersion: `${G}/v1beta1`, kind: 'ValidatingAdmissionPolicyBinding', metadata: { name: `b${i}` }, spec: { policyName: `p${i}`, validationActions: ['Deny'] }
      } })
    }
    await new Promise(resolve => setTimeout(resolve, 300))
  }
  const api = createApiServer({ registry, logger })
  const { port } = await api.listen({ port: 0 })
  const client = new Pool(`http://127.0.0.1:${port}`, { connections: CONCURRENCY })
  const lat: number[] = []
  const create = async (name: string): Promise<void> => {
    const r = await client.request({
      method: 'POST', path: '/api/v1/namespaces/default/configmaps', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { k: 'v' } })
    })
    await r.body.text()
    if (r.statusCode >= 300) throw new Error(`create answered ${r.statusCode}`)
  }
  // Untimed creates first: the sandbox threads' QuickJS module tiers up (V8 compiles its hot functions in background
  // threads) and the JIT warms, once per server as in a long-running one; the figures are the steady state.
  let warmed = 0
  await Promise.all(Array.from({ length: CONCURRENCY }, async () => { while (warmed < WARMUP) await create(`warm-${warmed++}`) }))
  let next = 0
  // CPU of the whole process (main thread, sandbox threads, the in-process client): less sensitive than throughput
  // to other work on a shared machine; the client's share is the same in every scenario.
  const cpu0 = process.cpuUsage()
  const t0 = performance.now()
  await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
    while (next < REQUESTS) {
      const i = next++
      const s = performance.now()
      await create(`cm-${i}`)
      lat.push(performance.now() - s)
    }
  }))
  const wall = performance.now() - t0
  const cpu = process.cpuUsage(cpu0)
  await client.close()
  plugin.stop()
  await webhooks.stop()
  await webhook?.close()
  await api.close()
  await registry.stop()
  await store.close()
  await pool.close()
  rmSync(dir, { recursive: true, force: true })
  lat.sort((a, b) => a - b)
  const pct = (p: number): number => +lat[Math.min(lat.length - 1, Math.floor(lat.length * p))].toFixed(2)
  return { perSecond: Math.round(REQUESTS / wall * 1000), p50Ms: pct(0.5), p99Ms: pct(0.99), cpuMicrosPerRequest: Math.round((cpu.user + cpu.system) / REQUESTS) }
}

// A first round warms the JIT, LMDB and the sandbox threads' code; it is not reported. Then ROUNDS rounds of the
// four scenarios in turn, odd rounds in reverse (so a busy spell of the shared machine hits them alike); each figure is
// the median over the rounds; nonMatchingCostPercentPaired is the median of each round against its own no-admission run.
await measure('none')
type Measured = Awaited<ReturnType<typeof measure>>
const rounds: Array<Record<Scenario, Measured>> = []
const baselineRounds: Measured[] = []
// Odd rounds run the scenarios in reverse order, so whatever the order favours (a warmer machine, the heap or page
// cache the scenario before left) falls on each scenario alike.
const ORDER: Scenario[] = ['none', 'nonMatching', 'matching', 'webhook']
for (let i = 0; i < ROUNDS; i++) {
  const round: Partial<Record<Scenario, Measured>> = {}
  for (const sc of i % 2 === 0 ? ORDER : [...ORDER].reverse()) {
    round[sc] = await measure(sc)
    await settle()
  }
  rounds.push(round as Record<Scenario, Measured>)
  if (baselinePool) {
    baselineRounds.push(await measure('matching', baselinePool))
    await settle()
  }
}
const median = (xs: number[]): number => { const s = [...xs].sort((a, b) => a - b); return s[Math.floor(s.length / 2)] }
const med = (sc: Scenario): Measured => ({
  perSecond: median(rounds.map(r => r[sc].perSecond)), p50Ms: median(rounds.map(r => r[sc].p50Ms)), p99Ms: median(rounds.map(r => r[sc].p99Ms)),
  cpuMicrosPerRequest: median(rounds.map(r => r[sc].cpuMicrosPerRequest))
})
const leastCpu = (sc: Scenario): number => Math.min(...rounds.map(r => r[sc].cpuMicrosPerRequest))
const noAdmission = med('none')
const tenNonMatchingPolicies = med('nonMatching')
const tenMatchingPolicies = med('matching')
const oneLocalWebhook = med('webhook')
/** Server time a create costs more per policy or webhook, from throughput (the server is saturated by the clients). */
const extraMicros = (r: { perSecond: number }, n: number, base: { perSecond: number } = noAdmission): number => Math.round((1 / r.perSecond - 1 / base.perSecond) * 1e6 / n)
const result = {
  benchmark: 'validating-admission-policy', requests: REQUESTS, concurrency: CONCURRENCY, poolThreads: POOL, rounds: ROUNDS,
  noAdmission, tenNonMatchingPolicies, tenMatchingPolicies, oneLocalWebhook,
  nonMatchingCostPercent: +((noAdmission.perSecond / tenNonMatchingPolicies.perSecond - 1) * 100).toFixed(1),
  /** The same per round (each against its own round's no-admission run), and the median of those. */
  nonMatchingCostPercentByRound: rounds.map(r => +((r.none.perSecond / r.nonMatching.perSecond - 1) * 100).toFixed(1)),
  nonMatchingCostPercentPaired: +median(rounds.map(r => (r.none.perSecond / r.nonMatching.perSecond - 1) * 100)).toFixed(1),
  /** The same from process CPU per create (steadier on a shared machine), and per round against that round's own. */
  nonMatchingCpuCostPercent: +((tenNonMatchingPolicies.cpuMicrosPerRequest / noAdmission.cpuMicrosPerRequest - 1) * 100).toFixed(1),
  nonMatchingCpuCostPercentByRound: rounds.map(r => +((r.nonMatching.cpuMicrosPerRequest / r.none.cpuMicrosPerRequest - 1) * 100).toFixed(1)),
  /** Each scenario's least CPU per create over the rounds (the round least disturbed by the shared machine), compared. */
  nonMatchingCpuCostPercentByLeastCpu: +((leastCpu('nonMatching') / leastCpu('none') - 1) * 100).toFixed(1),
  perMatchingPolicyCpuMicrosByLeastCpu: Math.round((leastCpu('matching') - leastCpu('none')) / 10),
  perMatchingPolicyMicros: extraMicros(tenMatchingPolicies, 10),
  perWebhookMicros: extraMicros(oneLocalWebhook, 1),
  /** CPU a create costs more per matching policy (all threads of the process), from cpuMicrosPerRequest. */
  perMatchingPolicyCpuMicros: Math.round((tenMatchingPolicies.cpuMicrosPerRequest - noAdmission.cpuMicrosPerRequest) / 10),
  /** The same per round (min..max spread of the shared machine). */
  perMatchingPolicyMicrosByRound: rounds.map(r => extraMicros(r.matching, 10, r.none)),
  loadAverage: loadavg().map(l => +l.toFixed(2)),
  ...(BASELINE ? { baseline: baselineFigures() } : {})
}

/** Per matching policy on BASELINE's pool and on this one, each round against that round's no-admission run. */
function baselineFigures (): Record<string, unknown> {
  const per = (m: Measured[], key: 'cpu' | 'time') => m.map((x, i) => key === 'cpu' ? Math.round((x.cpuMicrosPerRequest - rounds[i].none.cpuMicrosPerRequest) / 10) : extraMicros(x, 10, rounds[i].none))
  const summary = (xs: number[]) => ({ min: Math.min(...xs), median: median(xs), byRound: xs })
  const after = rounds.map(r => r.matching)
  return {
    dir: BASELINE,
    tenMatchingPoliciesBefore: { perSecond: median(baselineRounds.map(r => r.perSecond)), cpuMicrosPerRequest: median(baselineRounds.map(r => r.cpuMicrosPerRequest)) },
    perMatchingPolicyCpuMicros: { before: summary(per(baselineRounds, 'cpu')), after: summary(per(after, 'cpu')) },
    perMatchingPolicyMicros: { before: summary(per(baselineRounds, 'time')), after: summary(per(after, 'time')) }
  }
}
console.log(JSON.stringify(result))
const out = resolve(dirname(fileURLToPath(import.meta.url)), 'results', 'validating-admission-policy.json')
mkdirSync(dirname(out), { recursive: true })
writeFileSync(out, JSON.stringify(result, null, 2) + '\n')
