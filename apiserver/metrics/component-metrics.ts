// One component's metrics: its own prom-client Registry, Kubernetes' stability levels and the deprecation lifecycle.
// Each component (API server, controller manager, scheduler, orchlet) makes one; nothing is registered globally (the
// process and Node.js runtime metrics every one exposes are one set per process: process-metrics.ts).

import { Counter, Gauge, Histogram, Registry, type Metric } from 'prom-client'
import { processMetrics, type ProcessMetrics } from './process-metrics.js'

/** component-base's stability levels; the help text is prefixed with `[LEVEL] `. */
export type StabilityLevel = 'INTERNAL' | 'ALPHA' | 'BETA' | 'STABLE'

export interface MetricOpts<L extends string> {
  name: string
  help: string
  labelNames?: readonly L[]
  /** Default ALPHA, as in component-base. */
  stabilityLevel?: StabilityLevel
  /** The release (`1.28`) the metric was deprecated in: its help says so; from the next minor release it is hidden. */
  deprecatedVersion?: string
}

/** One sample of a collected metric; `suffix` names histogram series (`_bucket` with an `le` label, `_sum`, `_count`). */
export interface CollectedSample { labels?: Record<string, string>, value: number, suffix?: string }

export interface CollectedOpts extends MetricOpts<string> {
  type: 'counter' | 'gauge' | 'histogram'
  /** Help text as given, without a stability level (cAdvisor's metrics carry none). */
  plainHelp?: boolean
  /** Read at each scrape (values owned elsewhere: the runtimes' counters, a snapshot of the pod manager). */
  read: () => CollectedSample[] | Promise<CollectedSample[]>
}

export interface HistogramOpts<L extends string> extends MetricOpts<L> { buckets: number[] }

export interface ComponentMetricsOptions {
  /** The component's release as `major.minor` (orch serves 1.29). */
  version: string
  /** --show-hidden-metrics-for-version: only the previous minor release is accepted (validated by `validateShowHidden`). */
  showHiddenMetricsForVersion?: string
  /** Process and Node.js runtime metrics (prom-client's default collectors, one set per process) in the text; default on. */
  processMetrics?: boolean
}

/** The prefix spec document 1 §9.2.9 puts before a deprecated metric's description. */
export function deprecationNote (version: string): string { return `(Deprecated from ${version})` }

function parseMinor (v: string): { major: number, minor: number } | undefined {
  const m = /^v?(\d+)\.(\d+)(?:\.\d+)?$/.exec(v.trim())
  return m === null ? undefined : { major: Number(m[1]), minor: Number(m[2]) }
}

/** `1.29` → `1.28`: the only release --show-hidden-metrics-for-version accepts. */
export function previousMinor (version: string): string {
  const cur = parseMinor(version)
  return cur === undefined ? '' : `${cur.major}.${cur.minor - 1}`
}

/**
 * Checks a --show-hidden-metrics-for-version value against the component's release: as component-base, only the
 * previous minor release may be named. Returns the error line, or undefined when valid or empty.
 */
export function validateShowHidden (value: string | undefined, version: string): string | undefined {
  if (value === undefined || value === '') return undefined
  const want = previousMinor(version)
  const got = parseMinor(value)
  if (got === undefined || want === '' || `${got.major}.${got.minor}` !== want) {
    return `--show-hidden-metrics-for-version must be omitted or have the value '${want}'. Only the previous minor version is allowed`
  }
  return undefined
}

/** Whether a metric deprecated in `deprecated` is hidden in release `current` (from the next minor release on). */
export function isHidden (deprecated: string, current: string): boolean {
  const d = parseMinor(deprecated)
  const c = parseMinor(current)
  if (d === undefined || c === undefined) return false
  return c.major > d.major || (c.major === d.major && c.minor >= d.minor + 1)
}

export class ComponentMetrics {
  readonly registry = new Registry()
  private readonly showHidden: boolean
  private readonly process: ProcessMetrics | undefined

  constructor (private readonly o: ComponentMetricsOptions) {
    const invalid = validateShowHidden(o.showHiddenMetricsForVersion, o.version)
    if (invalid !== undefined) throw new Error(invalid)
    this.showHidden = (o.showHiddenMetricsForVersion ?? '') !== ''
    this.process = o.processMetrics === false ? undefined : processMetrics()
  }

  /** The help text as component-base writes it: `[STABLE] (Deprecated from 1.28) text`. */
  private describe (opts: MetricOpts<string>): { help: string, registers: Registry[] } {
    const level = opts.stabilityLevel ?? 'ALPHA'
    const deprecated = opts.deprecatedVersion
    const help = `[${level}] ${deprecated === undefined ? '' : deprecationNote(deprecated) + ' '}${opts.help}`
    // A hidden metric still exists (callers update it) but is in no registry, so it is never exposed.
    const hidden = deprecated !== undefined && isHidden(deprecated, this.o.version) && !this.showHidden
    return { help, registers: hidden ? [] : [this.registry] }
  }

  counter<L extends string> (opts: MetricOpts<L>): Counter<L> {
    return new Counter<L>({ name: opts.name, labelNames: opts.labelNames ?? [], ...this.describe(opts) })
  }

  gauge<L extends string> (opts: MetricOpts<L> & { collect?: (this: Gauge<L>) => void | Promise<void> }): Gauge<L> {
    return new Gauge<L>({ name: opts.name, labelNames: opts.labelNames ?? [], ...this.describe(opts), ...(opts.collect === undefined ? {} : { collect: opts.collect }) })
  }

  histogram<L extends string> (opts: HistogramOpts<L>): Histogram<L> {
    return new Histogram<L>({ name: opts.name, labelNames: opts.labelNames ?? [], buckets: opts.buckets, ...this.describe(opts) })
  }

  /**
   * A metric whose samples are read at scrape time, keeping its type (a counter kept by someone else stays a
   * counter, which prom-client's own Counter cannot be set to).
   */
  collected (opts: CollectedOpts): void {
    const { help, registers } = this.describe(opts)
    const name = opts.name
    const type = opts.type
    const metric = {
      name,
      help: opts.plainHelp === true ? opts.help : help,
      type,
      aggregator: 'sum',
      get: async () => ({
        name, help: opts.plainHelp === true ? opts.help : help, type, aggregator: 'sum',
        values: (await opts.read()).map(s => ({ labels: s.labels ?? {}, value: s.value, ...(s.suffix === undefined ? {} : { metricName: name + s.suffix }) }))
      }),
      reset: () => {}
    }
    for (const r of registers) r.registerMetric(metric as unknown as Metric)
  }

  private readonly scrapeHooks: Array<() => void | Promise<void>> = []

  /** Runs `hook` before each scrape (values read from elsewhere: stored objects, runtime statistics). */
  onScrape (hook: () => void | Promise<void>): void { this.scrapeHooks.push(hook) }

  /** The Prometheus text exposition of every registered metric. */
  async text (): Promise<string> {
    for (const hook of this.scrapeHooks) await hook()
    // The process's metrics first, as when the default collectors were registered first in this registry.
    return await (this.process === undefined ? this.registry : Registry.merge([this.process.registry, this.registry])).metrics()
  }

  get contentType (): string { return this.registry.contentType }
}

/** prometheus.ExponentialBuckets. */
export function exponentialBuckets (start: number, factor: number, count: number): number[] {
  return Array.from({ length: count }, (_, i) => start * factor ** i)
}
