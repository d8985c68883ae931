// Scrapes every node's orchlet /stats/summary and keeps, per node and container, the CPU rate between the last two scrapes.
//
// As metrics-server: usage is computed here from the cumulative usageCoreNanoSeconds of two scrapes (the orchlet's
// own usageNanoCores depends on who asked before), memory is the working set of the latest scrape. Scrapes run every
// `resolutionMs` once someone asked for metrics, and a first request waits for two scrapes so it is never empty.

import { Agent, request } from '../client/undici-core.js'
import type { OrchletTls } from '../endpoints/pod-log.js'
import { nodeEndpoint } from '../endpoints/pod-log.js'
import { internalContext } from '../registry/internal-context.js'
import type { Registry } from '../registry/types.js'

export interface Usage { cpuNanoCores: number; memoryBytes: number }
export interface NodeSample { name: string; labels: Record<string, string>; timestamp: string; windowSeconds: number; usage: Usage }
export interface PodSample {
  namespace: string; name: string; labels: Record<string, string>; timestamp: string; windowSeconds: number
  containers: Array<{ name: string; usage: Usage }>
}
export interface MetricsSnapshot { nodes: NodeSample[]; pods: PodSample[] }

export interface ResourceMetricsSource {
  snapshot(): Promise<MetricsSnapshot>
  close(): Promise<void>
}

export interface SummaryScraperOptions {
  registry: Registry
  tls?: OrchletTls
  /** Time between scrapes (metrics-server's --metric-resolution; default 10 s). */
  resolutionMs?: number
  timeoutMs?: number
  logger?: { debug(o: object, msg: string): void }
}

interface Point { atMs: number; cpuNs: number; memoryBytes: number }
interface Summary {
  node?: { cpu?: { time?: string; usageCoreNanoSeconds?: number }; memory?: { time?: string; workingSetBytes?: number } }
  pods?: Array<{
    podRef?: { name?: string; namespace?: string }
    containers?: Array<{ name?: string; cpu?: { time?: string; usageCoreNanoSeconds?: number }; memory?: { time?: string; workingSetBytes?: number } }>
  }>
}

function point (cpu: { time?: string; usageCoreNanoSeconds?: number } | undefined, mem: { workingSetBytes?: number } | undefined): Point | undefined {
  if (cpu?.usageCoreNanoSeconds === undefined || cpu.time === undefined) return undefined
  const atMs = Date.parse(cpu.time)
  if (Number.isNaN(atMs)) return undefined
  return { atMs, cpuNs: cpu.usageCoreNanoSeconds, memoryBytes: mem?.workingSetBytes ?? 0 }
}

/** The usage between two points of one series; undefined when the clock or counter went backwards or no time passed. */
function between (prev: Point | undefined, cur: Point): { usage: Usage; windowSeconds: number } | undefined {
  if (prev === undefined || cur.atMs <= prev.atMs || cur.cpuNs < prev.cpuNs) return undefined
  const seconds = (cur.atMs - prev.atMs) / 1000
  return { usage: { cpuNanoCores: Math.round((cur.cpuNs - prev.cpuNs) / seconds), memoryBytes: cur.memoryBytes }, windowSeconds: seconds }
}

export function createSummaryScraper (o: SummaryScraperOptions): ResourceMetricsSource {
  const resolutionMs = o.resolutionMs ?? 10_000
  const timeoutMs = o.timeoutMs ?? 5000
  const tls = o.tls ?? {}
  const agent = new Agent({
    connect: { ca: tls.caPem, cert: tls.certPem, key: tls.keyPem, rejectUnauthorized: tls.caPem !== undefined, timeout: timeoutMs },
    connectTimeout: timeoutMs
  })
  const ctx = internalContext('system:orch-metrics-scraper')
  /** series key -> [previous, latest]. */
  const series = new Map<string, [Point | undefined, Point]>()
  let scrapes = 0
  let timer: NodeJS.Timeout | undefined
  let running: Promise<void> | undefined
  let closed = false

  function record (key: string, p: Point | undefined, seen: Set<string>): void {
    if (p === undefined) return
    seen.add(key)
    const s = series.get(key)
    if (s !== undefined && s[1].atMs === p.atMs) return
    series.set(key, [s?.[1], p])
  }

  async function scrapeNode (node: Record<string, unknown>, seen: Set<string>): Promise<void> {
    const name = String((node.metadata as { name?: string } | undefined)?.name ?? '')
    const ep = nodeEndpoint(node)
    const host = ep.host.includes(':') ? `[${ep.host}]` : ep.host
    const r = await request(`https://${host}:${ep.port}/stats/summary`, { dispatcher: agent, headersTimeout: timeoutMs, bodyTimeout: timeoutMs })
    if (r.statusCode !== 200) { await r.body.dump(); throw new Error(`the orchlet answered ${r.statusCode}`) }
    const s = await r.body.json() as Summary
    record(`node/${name}`, point(s.node?.cpu, s.node?.memory), seen)
    for (const pod of s.pods ?? []) {
      for (const c of pod.containers ?? []) {
        record(`pod/${pod.podRef?.namespace ?? ''}/${pod.podRef?.name ?? ''}/${c.name ?? ''}`, point(c.cpu, c.memory), seen)
      }
    }
  }

  async function scrape (): Promise<void> {
    const nodes = o.registry.handler('', 'v1', 'nodes')
    if (nodes === undefined) return
    const list = await nodes.list(ctx, '', {})
    const seen = new Set<string>()
    await Promise.all(list.items.map(async bytes => {
      const node = JSON.parse(bytes.toString('utf8')) as Record<string, unknown>
      try { await scrapeNode(node, seen) } catch (err) { o.logger?.debug({ err, node: (node.metadata as { name?: string }).name }, 'summary scrape failed') }
    }))
    // Series not seen this time (containers gone, nodes unreachable) are dropped: their metrics are no longer current.
    for (const key of series.keys()) if (!seen.has(key)) series.delete(key)
    scrapes++
  }

  function schedule (): void {
    if (closed) return
    timer = setTimeout(() => { running = scrape().catch(() => {}).finally(schedule) }, resolutionMs)
    timer.unref()
  }

  async function labelsOf (resource: string): Promise<Map<string, Record<string, string>>> {
    const out = new Map<string, Record<string, string>>()
    const h = o.registry.handler('', 'v1', resource)
    if (h === undefined) return out
    for (const b of (await h.list(ctx, '', {})).items) {
      const m = (JSON.parse(b.toString('utf8')) as { metadata: { name: string; namespace?: string; labels?: Record<string, string> } }).metadata
      out.set(m.namespace === undefined ? m.name : `${m.namespace}/${m.name}`, m.labels ?? {})
    }
    return out
  }

  async function warmUp (): Promise<void> {
    await scrape()
    await new Promise(resolve => setTimeout(resolve, 1000))
    await scrape()
    schedule()
  }

  return {
    async snapshot () {
      if (scrapes < 2 && !closed) { running ??= warmUp(); await running }
      const nodeLabels = await labelsOf('nodes')
      const podLabels = await labelsOf('pods')
      const nodes: NodeSample[] = []
      const pods = new Map<string, PodSample>()
      for (const [key, [prev, cur]] of series) {
        const u = between(prev, cur)
        if (u === undefined) continue
        const timestamp = new Date(cur.atMs).toISOString().replace(/\.\d+Z$/, 'Z')
        const parts = key.split('/')
        if (parts[0] === 'node') {
          nodes.push({ name: parts[1]!, labels: nodeLabels.get(parts[1]!) ?? {}, timestamp, windowSeconds: u.windowSeconds, usage: u.usage })
          continue
        }
        const [, namespace = '', name = '', container = ''] = parts
        const labels = podLabels.get(`${namespace}/${name}`)
        if (labels === undefined) continue
        let p = pods.get(`${namespace}/${name}`)
        if (p === undefined) { p = { namespace, name, labels, timestamp, windowSeconds: u.windowSeconds, containers: [] }; pods.set(`${namespace}/${name}`, p) }
        p.containers.push({ name: container, usage: u.usage })
      }
      return { nodes, pods: [...pods.values()] }
    },
    async close () {
      closed = true
      if (timer !== undefined) clearTimeout(timer)
      await running?.catch(() => {})
      await agent.close()
    }
  }
}
