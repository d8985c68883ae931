// The Registry: one GenericStore per served group/version/resource, built-ins plus established CRDs, and the controllers.

import type { Store } from '../storage/store.js'
import type { ResourceDefinition } from '../schema/types.js'
import { builtinDefinitions } from '../schema/builtin/catalog.js'
import type { Registry, ResourceHandler } from './types.js'
import { GenericStore } from './generic-store.js'
import { systemClock, type Clock, type Logger } from './core.js'
import { builtinStrategy } from './strategies/index.js'
import { NamespaceController, namespaceAdmission } from './namespaces.js'
import { CrdController, customResourceStrategy, type CrdServing } from './crds.js'
import { GarbageCollector } from './garbage-collector.js'
import { resourcePrefix } from './keys.js'
import type { Strategy } from './strategy.js'
import { noCelRules, type CelRules, type CompiledRules } from './cel-rules.js'

export interface RegistryOptions {
  store: Store
  logger: Logger
  clock?: Clock
  /** Built-in definitions to serve (default: builtinDefinitions()). */
  definitions?: ResourceDefinition[]
  /** Longest wait for a too-new resourceVersion before 504 (default 3000 ms). */
  revisionWaitMs?: number
  /** Interval of watch bookmarks (default 60 s). */
  bookmarkIntervalMs?: number
  /** Retry delay of the namespace and CRD controllers while objects remain (default 500 ms). */
  controllerRetryMs?: number
  /** Full re-list interval of the garbage collector (default 0: at start and after a failed watch only). */
  gcResyncMs?: number
  serviceCIDR?: string
  nodePortRange?: [number, number]
  /** CRD validation rules (x-orch-validations) through the CEL sandbox; without it, CRDs with rules are refused. */
  celRules?: CelRules
}

export interface OrchRegistry extends Registry {
  /** The GenericStore behind a handler (controllers, tests). */
  store(group: string, version: string, plural: string): GenericStore | undefined
  namespaceController(): NamespaceController
  garbageCollector(): GarbageCollector
}

const keyOf = (g: string, v: string, p: string): string => `${g}/${v}/${p}`

export function createRegistry (o: RegistryOptions): OrchRegistry {
  const clock = o.clock ?? systemClock
  const handlers = new Map<string, GenericStore>()
  const builtinPlurals = new Set<string>()
  const crdKeys = new Map<string, { keys: string[], fingerprint: string, rules: CompiledRules[] }>()
  const cel = o.celRules ?? noCelRules
  const listeners = new Set<() => void>()
  const retired: GenericStore[] = []
  let started = false

  const makeStore = (def: ResourceDefinition, strategy: Strategy | undefined): GenericStore => new GenericStore({
    store: o.store,
    definition: def,
    strategy,
    clock,
    logger: o.logger,
    revisionWaitMs: o.revisionWaitMs,
    bookmarkIntervalMs: o.bookmarkIntervalMs,
    admitNamespace: def.namespaced ? namespaceAdmission(o.store, { group: def.group, resource: def.plural }) : undefined
  })

  for (const def of o.definitions ?? builtinDefinitions()) {
    handlers.set(keyOf(def.group, def.version, def.plural), makeStore(def, builtinStrategy(def, o)))
    builtinPlurals.add(`${def.plural}.${def.group}`)
  }
  const changed = (): void => { for (const l of listeners) { try { l() } catch (err) { o.logger.warn({ err }, 'definitions listener failed') } } }
  const must = (g: string, v: string, p: string): GenericStore => {
    const h = handlers.get(keyOf(g, v, p))
    if (h === undefined) throw new Error(`registry: ${p}.${g}/${v} is not served`)
    return h
  }

  let crdController: CrdController | undefined
  const serving: CrdServing = {
    async serve (crdName, defs) {
      await cel.prepare(defs.map(d => [d.schema, d.definitions]))
      const clash = defs.find(d => builtinPlurals.has(`${d.plural}.${d.group}`) ||
        [...crdKeys].some(([other, e]) => other !== crdName && e.keys.some(k => k.endsWith(`/${d.plural}`) && k.startsWith(`${d.group}/`))))
      if (clash !== undefined) return `"${clash.plural}" is already in use`
      const fingerprint = JSON.stringify(defs)
      if (crdKeys.get(crdName)?.fingerprint === fingerprint) return undefined
      const compiled: CompiledRules[] = []
      for (const def of defs) {
        const r = cel.compile(def.schema, def.definitions, 'openAPIV3Schema')
        if (!r.ok) { for (const c of compiled) c.release(); return `validation rules of ${def.version} do not compile: ${r.errors.map(e => `${e.field}: ${e.message}`).join('; ')}` }
        compiled.push(r.rules)
      }
      serving.unserve(crdName)
      const keys: string[] = []
      defs.forEach((def, i) => {
        const key = keyOf(def.group, def.version, def.plural)
        handlers.set(key, makeStore(def, customResourceStrategy(crdName, crdController?.terminating ?? new Set(), compiled[i])))
        keys.push(key)
      })
      crdKeys.set(crdName, { keys, fingerprint, rules: compiled })
      changed()
      return undefined
    },
    unserve (crdName) {
      const entry = crdKeys.get(crdName)
      if (entry === undefined) return
      crdKeys.delete(crdName)
      for (const r of entry.rules) r.release()
      for (const k of entry.keys) { const h = handlers.get(k); if (h !== undefined) { retired.push(h); h.stop() } handlers.delete(k) }
      changed()
    },
    storageHandler (crdName) {
      const k = crdKeys.get(crdName)?.keys[0]
      return k === undefined ? undefined : handlers.get(k)
    }
  }

  const namespacedByPrefix = (): GenericStore[] => {
    const seen = new Map<string, GenericStore>()
    for (const h of handlers.values()) {
      if (!h.definition.namespaced) continue
      const p = resourcePrefix(h.definition)
      if (!seen.has(p)) seen.set(p, h)
    }
    return [...seen.values()]
  }
  const nsController = new NamespaceController({
    store: o.store, namespaces: must('', 'v1', 'namespaces'), namespacedHandlers: namespacedByPrefix,
    logger: o.logger, retryMs: o.controllerRetryMs
  })
  const crdHandler = handlers.get(keyOf('apiextensions.orch.io', 'v1', 'customresourcedefinitions'))
  if (crdHandler !== undefined) {
    crdController = new CrdController({ store: o.store, crds: crdHandler, serving, clock, logger: o.logger, retryMs: o.controllerRetryMs })
  }

  const gc = new GarbageCollector({
    store: o.store,
    handlers: () => [...handlers.values()],
    onDefinitionsChanged: l => { listeners.add(l); return () => { listeners.delete(l) } },
    logger: o.logger,
    retryMs: o.controllerRetryMs,
    resyncMs: o.gcResyncMs
  })

  return {
    definitions () {
      return [...handlers.values()].map(h => h.definition)
        .sort((a, b) => a.group.localeCompare(b.group) || a.version.localeCompare(b.version) || a.plural.localeCompare(b.plural))
    },
    handler (group, version, plural): ResourceHandler | undefined {
      return handlers.get(keyOf(group, version, plural))
    },
    store (group, version, plural) {
      return handlers.get(keyOf(group, version, plural))
    },
    namespaceController: () => nsController,
    garbageCollector: () => gc,
    onDefinitionsChanged (listener) {
      listeners.add(listener)
      return () => { listeners.delete(listener) }
    },
    async start () {
      if (started) return
      started = true
      await nsController.start()
      await crdController?.start()
      await gc.start()
    },
    async stop () {
      gc.stop()
      nsController.stop()
      crdController?.stop()
      for (const h of handlers.values()) h.stop()
      for (const h of retired) h.stop()
    }
  }
}
