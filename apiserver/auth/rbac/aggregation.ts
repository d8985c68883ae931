// ClusterRole aggregation (clusterrole-aggregation-controller): an aggregated role's rules are those of the roles its selectors pick.

import type { Logger } from '../../registry/core.js'
import type { Obj, ResourceClient } from '../../controllers/client/types.js'
import type { SharedInformer } from '../../controllers/informer.js'
import { labelSelectorMatches, type LabelSelectorObject } from '../../registry/label-selector.js'
import type { PolicyRule } from './rules.js'

export interface AggregatorOptions {
  /** The ClusterRole cache (shared with the authorizer's index). */
  clusterRoles: SharedInformer
  client: ResourceClient
  logger: Logger
}

export interface Aggregator {
  /** Some ClusterRole changed: recompute every aggregated role (coalesced; writes only what differs). */
  changed(): void
  stop(): void
}

const selectorsOf = (role: Obj): LabelSelectorObject[] | undefined => {
  const sel = role.aggregationRule?.clusterRoleSelectors
  return Array.isArray(sel) ? sel as LabelSelectorObject[] : undefined
}

/** The rules `role` aggregates: the rules of every other role one selector picks, by role name, without repeats. */
export function aggregatedRules (role: Obj, all: Obj[]): PolicyRule[] {
  const selectors = selectorsOf(role) ?? []
  const picked = all
    .filter(c => c.metadata?.name !== role.metadata?.name && selectors.some(s => labelSelectorMatches(s, c.metadata?.labels ?? {})))
    .sort((a, b) => String(a.metadata.name).localeCompare(String(b.metadata.name)))
  const out: PolicyRule[] = []
  const seen = new Set<string>()
  for (const c of picked) {
    for (const r of (Array.isArray(c.rules) ? c.rules : []) as PolicyRule[]) {
      const key = JSON.stringify(r)
      if (seen.has(key)) continue
      seen.add(key)
      out.push(r)
    }
  }
  return out
}

export function createAggregator (o: AggregatorOptions): Aggregator {
  let dirty = false
  let running = false
  let stopped = false

  const syncAll = async (): Promise<void> => {
    const all = o.clusterRoles.list()
    for (const role of all) {
      if (stopped) return
      if (selectorsOf(role) === undefined) continue
      const rules = aggregatedRules(role, all)
      if (JSON.stringify(rules) === JSON.stringify(role.rules ?? [])) continue
      try {
        await o.client.update('', { ...role, rules })
      } catch (err) {
        // A conflict means a newer version is on its way through the watch, which triggers another pass.
        if ((err as { code?: number }).code !== 409 && (err as { code?: number }).code !== 404) {
          o.logger.warn({ err, clusterRole: role.metadata?.name }, 'clusterrole aggregation failed')
        }
      }
    }
  }

  const run = async (): Promise<void> => {
    running = true
    try {
      while (dirty && !stopped) {
        dirty = false
        await syncAll()
      }
    } finally {
      running = false
    }
  }

  return {
    changed () {
      dirty = true
      if (!running && !stopped && o.clusterRoles.hasSynced()) void run()
    },
    stop () { stopped = true }
  }
}
