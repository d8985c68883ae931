// The resource metrics API (metrics.orch.io/v1beta1, and metrics.k8s.io with upstream aliases): NodeMetrics and PodMetrics, read-only, served from a metrics source.
//
// The kinds are added to a Registry by wrapping it, so discovery, authorization and the get/list handlers treat them
// as any resource; every other verb is 405, as metrics-server's storage implements only Getter and Lister.

import { methodNotAllowed, notFound } from '../errors/status-error.js'
import { compileSelector, METADATA_FIELDS } from '../registry/selectors.js'
import type { ListResult, Registry, ResourceHandler } from '../registry/types.js'
import type { PrinterColumn, ResourceDefinition } from '../schema/types.js'
import type { MetricsSnapshot, ResourceMetricsSource, Usage } from './summary-scraper.js'

export const METRICS_GROUP = 'metrics.orch.io'
export const METRICS_UPSTREAM_GROUP = 'metrics.k8s.io'

const objectSchema = { type: 'object' as const, 'x-kubernetes-preserve-unknown-fields': true }

function definition (group: string, kind: 'NodeMetrics' | 'PodMetrics'): ResourceDefinition {
  const columns: PrinterColumn[] = kind === 'NodeMetrics'
    ? [{ name: 'CPU', type: 'string', jsonPath: '.usage.cpu' }, { name: 'Memory', type: 'string', jsonPath: '.usage.memory' }, { name: 'Window', type: 'string', jsonPath: '.window' }]
    : [{ name: 'Window', type: 'string', jsonPath: '.window' }]
  const plural = kind === 'NodeMetrics' ? 'nodes' : 'pods'
  return {
    group, version: 'v1beta1', kind, listKind: `${kind}List`, plural, singular: '', shortNames: [], categories: [],
    namespaced: kind === 'PodMetrics', verbs: ['get', 'list'], subresources: {},
    schema: objectSchema as unknown as ResourceDefinition['schema'], definitions: {}, printerColumns: columns,
    storageVersion: 'v1beta1', allowCreateOnUpdate: false
  }
}

/** Kubernetes quantities as metrics-server prints them: CPU in nanocores, memory in KiB. */
export function usageQuantities (u: Usage): { cpu: string; memory: string } {
  return { cpu: `${u.cpuNanoCores}n`, memory: `${Math.round(u.memoryBytes / 1024)}Ki` }
}

function window (seconds: number): string {
  return `${Math.round(seconds * 1000) / 1000}s`
}

function objectsOf (def: ResourceDefinition, snap: MetricsSnapshot): Array<Record<string, unknown>> {
  const apiVersion = `${def.group}/${def.version}`
  if (def.kind === 'NodeMetrics') {
    return snap.nodes.map(n => ({
      kind: 'NodeMetrics', apiVersion,
      metadata: { name: n.name, creationTimestamp: new Date().toISOString().replace(/\.\d+Z$/, 'Z'), labels: n.labels },
      timestamp: n.timestamp, window: window(n.windowSeconds), usage: usageQuantities(n.usage)
    }))
  }
  return snap.pods.map(p => ({
    kind: 'PodMetrics', apiVersion,
    metadata: { name: p.name, namespace: p.namespace, creationTimestamp: new Date().toISOString().replace(/\.\d+Z$/, 'Z'), labels: p.labels },
    timestamp: p.timestamp, window: window(p.windowSeconds),
    containers: p.containers.map(c => ({ name: c.name, usage: usageQuantities(c.usage) }))
  }))
}

function metricsHandler (def: ResourceDefinition, source: ResourceMetricsSource): ResourceHandler {
  const qr = { group: def.group, resource: def.plural }
  const refuse = async (): Promise<never> => { throw methodNotAllowed('POST', `${def.plural}.${def.group}`) }
  const inScope = (o: Record<string, unknown>, namespace: string): boolean =>
    namespace === '' || (o.metadata as { namespace?: string }).namespace === namespace
  return {
    definition: def,
    async get (_ctx, namespace, name) {
      const found = objectsOf(def, await source.snapshot()).find(o => inScope(o, namespace) && (o.metadata as { name: string }).name === name)
      if (found === undefined) throw notFound(qr, name)
      return Buffer.from(JSON.stringify(found))
    },
    async list (_ctx, namespace, query): Promise<ListResult> {
      const selector = compileSelector(query.labelSelector, query.fieldSelector, METADATA_FIELDS)
      const items = objectsOf(def, await source.snapshot())
        .filter(o => inScope(o, namespace) && selector.matches(o))
        .sort((a, b) => JSON.stringify(a.metadata).localeCompare(JSON.stringify(b.metadata)))
      return { items: items.map(o => Buffer.from(JSON.stringify(o))), resourceVersion: '', continue: '' }
    },
    watch: refuse, create: refuse, update: refuse, patch: refuse, apply: refuse, delete: refuse, deleteCollection: refuse
  }
}

/** The registry with the metrics kinds added (under `metrics.k8s.io` too when `upstreamAliases` is not false). */
export function withResourceMetrics (registry: Registry, source: ResourceMetricsSource, o: { upstreamAliases?: boolean } = {}): Registry {
  const groups = o.upstreamAliases === false ? [METRICS_GROUP] : [METRICS_GROUP, METRICS_UPSTREAM_GROUP]
  const handlers = new Map<string, ResourceHandler>()
  for (const g of groups) {
    for (const kind of ['NodeMetrics', 'PodMetrics'] as const) {
      const def = definition(g, kind)
      handlers.set(`${g}/${def.version}/${def.plural}`, metricsHandler(def, source))
    }
  }
  const own = [...handlers.values()].map(h => h.definition)
  return {
    definitions: () => [...registry.definitions(), ...own],
    handler: (group, version, plural) => handlers.get(`${group}/${version}/${plural}`) ?? registry.handler(group, version, plural),
    creater: (g, v, p) => registry.creater(g, v, p),
    subresource: (g, v, p, s) => registry.subresource(g, v, p, s),
    subresourceNames: (g, v, p) => registry.subresourceNames(g, v, p),
    knownNamespace: name => registry.knownNamespace(name),
    admitConnect: async (ctx, target, options) => { await registry.admitConnect(ctx, target, options) },
    onDefinitionsChanged: l => registry.onDefinitionsChanged(l),
    start: async () => await registry.start(),
    stop: async () => { await source.close(); await registry.stop() }
  }
}
