// LIST throughput: orch against its ceiling (a minimal HTTPS server answering with the very bytes orch sent for the
// same URL), alternately in the same run. OBJECTS ConfigMaps of OBJECT_BYTES (created once per size through
// concurrent POSTs, then served by a fresh `orch apiserver` each round); a client process times full LISTs, paged
// LISTs (limit=LIMIT following `continue`) and gzip LISTs; server CPU from /proc; server RSS before, peak (sampled
// every 5 ms) and after the first full LIST.
// Run: npx tsx benchmarks/list.ts   (OBJECTS: comma-separated sizes, default 10000,100000; OBJECT_BYTES, LIMIT,
// REPS (LISTs per phase and round), ROUNDS, CONCURRENCY (creating POSTs), ORCH_ROOT: the tree whose bin/orch.js is
// measured, default this one; ORCH_NODE_ARGS: node flags for it (e.g. --cpu-prof); DATA_ROOT: where the populated
// data directories live and are kept for later runs, default a temporary directory removed at the end).
// Selector case: SELECTOR_OBJECTS ConfigMaps (default 100000, 0: none), every SELECTOR_EVERY-th (default 100) labelled
// sel=yes, the others sel=no; full and paged LISTs with labelSelector=sel=yes by BEFORE_ROOT's orch (a checkout
// without the selector index, e.g. main) and ORCH_ROOT's, alternately in the same run (OBJECTS='' for this case only).
// Prints one JSON line and writes benchmarks/results/list.json (LABEL adds a suffix).

import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs'
import { request } from 'node:https'
import { tmpdir } from 'node:os'
import { join, dirname } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parse } from 'yaml'
import { cpuSeconds, harnessChild, message, rssMiB, sleep, stop, type Creds } from './harness/processes.js'

const SIZES = (process.env.OBJECTS ?? '10000,100000').split(',').map(Number).filter(n => n > 0)
const SELECTOR_OBJECTS = Number(process.env.SELECTOR_OBJECTS ?? 100000)
const SELECTOR_EVERY = Number(process.env.SELECTOR_EVERY ?? 100)
const beforeRoot = process.env.BEFORE_ROOT
const OBJECT_BYTES = Number(process.env.OBJECT_BYTES ?? 1024)
const LIMIT = Number(process.env.LIMIT ?? 500)
const REPS = Number(process.env.REPS ?? 3)
const ROUNDS = Number(process.env.ROUNDS ?? 3)
const CONCURRENCY = Number(process.env.CONCURRENCY ?? 32)
const here = dirname(fileURLToPath(import.meta.url))
const root = join(here, '..')
const orchRoot = process.env.ORCH_ROOT ?? root
const dataRoot = process.env.DATA_ROOT ?? mkdtempSync(join(tmpdir(), 'orch-list-'))
const PATH = '/api/v1/namespaces/default/configmaps'






/** A GET's raw body (not inflated) and status. */
async function rawGet (creds: Creds, path: string, gzip = false): Promise<{ status: number, body: Buffer }> {
  return await new Promise((resolve, reject) => {
    request(creds.url + path, { cert: creds.cert, key: creds.key, rejectUnauthorized: false, headers: gzip ? { 'accept-encoding': 'gzip' } : {} }, res => {
      const parts: Buffer[] = []
      res.on('data', (c: Buffer) => parts.push(c))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(parts) }))
    }).on('error', reject).end()
  })
}

function readCreds (dataDir: string): Creds {
  const cfg = parse(readFileSync(join(dataDir, 'kubeconfig'), 'utf8')) as { clusters: Array<{ cluster: { server: string } }>, users: Array<{ user: Record<string, string> }> }
  const b64 = (s: string | undefined): string => Buffer.from(s ?? '', 'base64').toString()
  return { url: cfg.clusters[0]!.cluster.server, cert: b64(cfg.users[0]!.user['client-certificate-data']), key: b64(cfg.users[0]!.user['client-key-data']) }
}

/** Starts `orch apiserver` on the data directory and waits until it answers a LIST. */
async function startOrch (dataDir: string, tree = orchRoot): Promise<{ server: ChildProcess, creds: Creds }> {
  const kc = join(dataDir, 'kubeconfig')
  rmSync(kc, { force: true }) // written anew once the server listens (its port changes)
  const nodeArgs = (process.env.ORCH_NODE_ARGS ?? '').split(' ').filter(a => a !== '')
  const server = spawn(process.execPath, [...nodeArgs, join(tree, 'bin/orch.js'), 'apiserver', '--data-dir', dataDir, '--port', '0'], { stdio: ['ignore', 'ignore', 'inherit'] })
  const deadline = Date.now() + 120_000
  for (;;) {
    if (Date.now() > deadline) throw new Error('orch did not start')
    if (server.exitCode !== null) throw new Error(`orch exited ${server.exitCode}`)
    if (existsSync(kc)) {
      const creds = readCreds(dataDir)
      const r = await rawGet(creds, `${PATH}?limit=1`).catch(() => undefined)
      if (r?.status === 200) return { server, creds }
    }
    await sleep(50)
  }
}

/** A data directory holding `objects` ConfigMaps (every `labelEvery`-th sel=yes), made once (through POSTs of a load process) and kept. */
async function populated (objects: number, labelEvery = 0): Promise<string> {
  const dir = join(dataRoot, `cm-${objects}-${OBJECT_BYTES}${labelEvery > 0 ? `-sel${labelEvery}` : ''}`)
  if (existsSync(join(dir, 'populated'))) return dir
  rmSync(dir, { recursive: true, force: true })
  mkdirSync(dir, { recursive: true })
  const { server, creds } = await startOrch(dir)
  try {
    const load = spawn(process.execPath, ['--import', 'tsx', join(here, 'fanout/load.ts')], {
      env: { ...process.env, URL: creds.url, CERT: creds.cert, KEY: creds.key, EVENTS: String(objects), CONCURRENCY: String(CONCURRENCY), OBJECT_BYTES: String(OBJECT_BYTES), LABEL_EVERY: String(labelEvery) },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc']
    })
    await message(load)
    const { seconds } = await message<{ seconds: number }>(load, { go: true })
    console.error(`created ${objects} ConfigMaps in ${seconds.toFixed(1)} s`)
    await stop(load)
  } finally {
    await stop(server)
  }
  writeFileSync(join(dir, 'populated'), String(objects))
  return dir
}

/** Records the responses orch sends (full, gzip, every page of the paged walk) for the ceiling to replay. */
async function record (creds: Creds, dir: string): Promise<string> {
  const index: Record<string, { file: string, gzip: boolean }> = {}
  let n = 0
  const keep = (url: string, body: Buffer, gzip: boolean): void => {
    const file = join(dir, `r${n++}`)
    writeFileSync(file, body)
    index[(gzip ? 'gzip ' : '') + url] = { file, gzip }
  }
  keep(PATH, (await rawGet(creds, PATH)).body, false)
  keep(PATH, (await rawGet(creds, PATH, true)).body, true)
  let token = ''
  do {
    const url = `${PATH}?limit=${LIMIT}${token === '' ? '' : `&continue=${encodeURIComponent(token)}`}`
    const { body } = await rawGet(creds, url)
    keep(url, body, false)
    token = /"continue":"([^"]*)"/.exec(body.toString('latin1', 0, 4096))?.[1] ?? ''
  } while (token !== '')
  const file = join(dir, 'index.json')
  writeFileSync(file, JSON.stringify(index))
  return file
}

interface Phase { seconds: number[], cpu: number, bytes: number, pages: number }
interface Run {
  fullSeconds: number[], fullCpu: number, fullBytes: number
  pagedSeconds: number[], pagedCpu: number, pages: number
  gzipSeconds: number[], gzipCpu: number, gzipBytes: number
  rssBeforeMiB: number, rssPeakMiB: number, rssAfterMiB: number
}

async function phase (server: ChildProcess, client: ChildProcess, cmd: string): Promise<Phase> {
  const cpu0 = cpuSeconds(server.pid!)
  const r = await message<{ seconds: number[], bytes: number, pages: number }>(client, { cmd, path: PATH, reps: REPS })
  return { ...r, cpu: (cpuSeconds(server.pid!) - cpu0) / REPS }
}

/** One round against a started server: the first full LIST with RSS sampled, then the timed phases. */
async function measure (server: ChildProcess, creds: Creds): Promise<Run> {
  const client = harnessChild(join(here, 'list', 'client.ts'), { URL: creds.url, CERT: creds.cert, KEY: creds.key, LIMIT: String(LIMIT) })
  try {
    await message(client)
    await sleep(300)
    const rssBeforeMiB = rssMiB(server.pid!)
    let rssPeakMiB = rssBeforeMiB
    const sampler = setInterval(() => { rssPeakMiB = Math.max(rssPeakMiB, rssMiB(server.pid!)) }, 5)
    await message(client, { cmd: 'full', path: PATH, reps: 1 })
    clearInterval(sampler)
    await sleep(300)
    const rssAfterMiB = rssMiB(server.pid!)
    const full = await phase(server, client, 'full')
    const paged = await phase(server, client, 'paged')
    const gzip = await phase(server, client, 'gzip')
    return {
      fullSeconds: full.seconds, fullCpu: full.cpu, fullBytes: full.bytes,
      pagedSeconds: paged.seconds, pagedCpu: paged.cpu, pages: paged.pages,
      gzipSeconds: gzip.seconds, gzipCpu: gzip.cpu, gzipBytes: gzip.bytes,
      rssBeforeMiB: Math.round(rssBeforeMiB), rssPeakMiB: Math.round(rssPeakMiB), rssAfterMiB: Math.round(rssAfterMiB)
    }
  } finally {
    client.send({ cmd: 'stop' })
    await stop(client)
  }
}

const median = (xs: number[]): number => { const s = [...xs].sort((a, b) => a - b); return s[Math.floor(s.length / 2)]! }
const r3 = (x: number): number => Number(x.toFixed(3))

function summary (runs: Run[]): Record<string, number> {
  const all = (f: (r: Run) => number[]): number[] => runs.flatMap(f)
  return {
    fullSecondsMin: r3(Math.min(...all(r => r.fullSeconds))), fullSecondsMedian: r3(median(all(r => r.fullSeconds))),
    fullCpuMedian: r3(median(runs.map(r => r.fullCpu))), fullBytes: runs[0]!.fullBytes,
    pagedSecondsMin: r3(Math.min(...all(r => r.pagedSeconds))), pagedSecondsMedian: r3(median(all(r => r.pagedSeconds))),
    pagedCpuMedian: r3(median(runs.map(r => r.pagedCpu))), pages: runs[0]!.pages,
    gzipSecondsMin: r3(Math.min(...all(r => r.gzipSeconds))), gzipSecondsMedian: r3(median(all(r => r.gzipSeconds))),
    gzipCpuMedian: r3(median(runs.map(r => r.gzipCpu))), gzipBytes: runs[0]!.gzipBytes,
    rssBeforeMiB: median(runs.map(r => r.rssBeforeMiB)), rssPeakMiB: median(runs.map(r => r.rssPeakMiB)),
    rssAfterMiB: median(runs.map(r => r.rssAfterMiB)), rssGrowthMiB: median(runs.map(r => r.rssPeakMiB - r.rssBeforeMiB))
  }
}

async function size (objects: number): Promise<Record<string, unknown>> {
  const dataDir = await populated(objects)
  const recDir = mkdtempSync(join(tmpdir(), 'orch-list-rec-'))
  const orch: Run[] = []
  const ceiling: Run[] = []
  try {
    let responses: string | undefined
    let serving: { cert: string, key: string } | undefined
    let clientCreds: Creds | undefined
    for (let r = 0; r < ROUNDS; r++) {
      const { server, creds } = await startOrch(dataDir)
      try {
        if (responses === undefined) {
          responses = await record(creds, recDir)
          clientCreds = creds
          serving = { cert: readFileSync(join(dataDir, 'pki/apiserver.crt'), 'utf8'), key: readFileSync(join(dataDir, 'pki/apiserver.key'), 'utf8') }
          await stop(server) // measure a fresh server: the recording must not warm it
          const again = await startOrch(dataDir)
          try { orch.push(await measure(again.server, { ...again.creds })) } finally { await stop(again.server) }
        } else {
          orch.push(await measure(server, creds))
        }
      } finally {
        await stop(server)
      }
      console.error(`${objects} round ${r + 1} orch ${JSON.stringify(orch[r])}`)
      const c = harnessChild(join(here, 'list', 'ceiling.ts'), { CERT: serving!.cert, KEY: serving!.key, RESPONSES: responses })
      try {
        const port = await new Promise<string>(resolve => c.stdout!.once('data', (b: Buffer) => resolve(b.toString().trim())))
        ceiling.push(await measure(c, { ...clientCreds!, url: `https://127.0.0.1:${port}` }))
      } finally {
        await stop(c)
      }
      console.error(`${objects} round ${r + 1} ceiling ${JSON.stringify(ceiling[r])}`)
    }
  } finally {
    rmSync(recDir, { recursive: true, force: true })
  }
  const o = summary(orch)
  const c = summary(ceiling)
  return {
    objects,
    orch: o,
    ceiling: c,
    // Ceiling seconds / orch seconds (1 = as fast as the ceiling), of the fastest and the typical LIST.
    fullRatioMin: r3(c.fullSecondsMin! / o.fullSecondsMin!),
    fullRatioMedian: r3(c.fullSecondsMedian! / o.fullSecondsMedian!),
    pagedRatioMedian: r3(c.pagedSecondsMedian! / o.pagedSecondsMedian!),
    gzipRatioMedian: r3(c.gzipSecondsMedian! / o.gzipSecondsMedian!),
    runs: { orch, ceiling }
  }
}

interface SelectorRun { tree: string, fullSeconds: number[], fullCpu: number, fullBytes: number, pagedSeconds: number[], pagedCpu: number, pages: number }

/** One tree's round of the selector case: a fresh server, one untimed LIST, then REPS full and REPS paged LISTs. */
async function selectorRound (dataDir: string, tree: string): Promise<SelectorRun> {
  const { server, creds } = await startOrch(dataDir, tree)
  const client = harnessChild(join(here, 'list', 'client.ts'), { URL: creds.url, CERT: creds.cert, KEY: creds.key, LIMIT: String(LIMIT) })
  const path = `${PATH}?labelSelector=${encodeURIComponent('sel=yes')}`
  try {
    await message(client)
    await message(client, { cmd: 'full', path, reps: 1 })
    const timed = async (cmd: string): Promise<Phase> => {
      const cpu0 = cpuSeconds(server.pid!)
      const r = await message<{ seconds: number[], bytes: number, pages: number }>(client, { cmd, path, reps: REPS })
      return { ...r, cpu: (cpuSeconds(server.pid!) - cpu0) / REPS }
    }
    const full = await timed('full')
    const paged = await timed('paged')
    return { tree, fullSeconds: full.seconds, fullCpu: full.cpu, fullBytes: full.bytes, pagedSeconds: paged.seconds, pagedCpu: paged.cpu, pages: paged.pages }
  } finally {
    client.send({ cmd: 'stop' })
    await stop(client)
    await stop(server)
  }
}

function selectorSummary (runs: SelectorRun[]): Record<string, number> {
  const all = (f: (r: SelectorRun) => number[]): number[] => runs.flatMap(f)
  return {
    fullSecondsMin: r3(Math.min(...all(r => r.fullSeconds))), fullSecondsMedian: r3(median(all(r => r.fullSeconds))),
    fullCpuMedian: r3(median(runs.map(r => r.fullCpu))), fullBytes: runs[0]!.fullBytes,
    pagedSecondsMin: r3(Math.min(...all(r => r.pagedSeconds))), pagedSecondsMedian: r3(median(all(r => r.pagedSeconds))),
    pagedCpuMedian: r3(median(runs.map(r => r.pagedCpu))), pages: runs[0]!.pages
  }
}

/** The selector case: the tree without the index (BEFORE_ROOT) and this one, alternately, on the same data. */
async function selectorCase (objects: number): Promise<Record<string, unknown>> {
  const dataDir = await populated(objects, SELECTOR_EVERY)
  const trees = beforeRoot === undefined ? [orchRoot] : [beforeRoot, orchRoot]
  const runs: SelectorRun[] = []
  for (let r = 0; r < ROUNDS; r++) {
    for (const tree of trees) {
      runs.push(await selectorRound(dataDir, tree))
      console.error(`selector ${objects} round ${r + 1} ${JSON.stringify(runs[runs.length - 1])}`)
    }
  }
  const after = selectorSummary(runs.filter(x => x.tree === orchRoot))
  const before = beforeRoot === undefined ? undefined : selectorSummary(runs.filter(x => x.tree === beforeRoot))
  return {
    objects, labelled: Math.ceil(objects / SELECTOR_EVERY), selector: 'sel=yes', beforeRoot, after, before,
    // before / after (how many times faster the indexed LIST is), of the typical LIST
    ...(before === undefined ? {} : { fullSpeedupMedian: r3(before.fullSecondsMedian! / after.fullSecondsMedian!), fullCpuRatio: r3(before.fullCpuMedian! / after.fullCpuMedian!), pagedSpeedupMedian: r3(before.pagedSecondsMedian! / after.pagedSecondsMedian!) }),
    runs
  }
}

const results = []
let selector: Record<string, unknown> | undefined
try {
  for (const n of SIZES) results.push(await size(n))
  if (SELECTOR_OBJECTS > 0) selector = await selectorCase(SELECTOR_OBJECTS)
} finally {
  if (process.env.DATA_ROOT === undefined) rmSync(dataRoot, { recursive: true, force: true })
}
const bySize = Object.fromEntries(results.map(r => [String(r.objects), r]))
const small = bySize['10000'] as { orch: Record<string, number> } | undefined
const large = bySize['100000'] as { orch: Record<string, number> } | undefined
const result = {
  benchmark: 'list',
  orchRoot: orchRoot === root ? 'this tree' : orchRoot,
  objectBytes: OBJECT_BYTES, limit: LIMIT, reps: REPS, rounds: ROUNDS,
  // Paged LIST time at 100k over that at 10k (10 = linear in the objects).
  ...(small !== undefined && large !== undefined ? { pagedGrowth10x: r3(large.orch.pagedSecondsMedian! / small.orch.pagedSecondsMedian!) } : {}),
  sizes: results,
  selector,
  node: process.version,
  date: new Date().toISOString()
}
console.log(JSON.stringify(result))
mkdirSync(join(root, 'benchmarks/results'), { recursive: true })
const label = process.env.LABEL !== undefined ? `-${process.env.LABEL}` : ''
writeFileSync(join(root, `benchmarks/results/list${label}.json`), JSON.stringify(result, null, 2) + '\n')
