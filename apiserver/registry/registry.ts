// The Registry: one GenericStore per served group/version/resource, built-ins plus established CRDs, and the controllers.

import type { ExpressionEvaluator } from '../../sandbox/expression-evaluator.js'
import type { Store } from '../storage/store.js'
import type { ResourceDefinition } from '../schema/types.js'
import { upstreamGroup } from '../schema/builtin/upstream-groups.js'
import { builtinDefinitions } from '../schema/builtin/catalog.js'
import type { Authorizer, RuleResolver } from '../auth/types.js'
import type { Creater, Registry, ResourceHandler, SubresourceCreater } from './types.js'
import { createBindingSubresource } from './subresources/binding.js'
import { createEvictionSubresource } from './subresources/eviction.js'
import { createTokenRequestSubresource, type TokenIssuer } from './subresources/token-request.js'
import { createReviews } from './reviews/index.js'
import type { TokenReviewAuthenticator } from './reviews/token-review.js'
import { GenericStore } from './generic-store.js'
import { systemClock, type Clock, type Logger } from './core.js'
import { builtinStrategy } from './strategies/index.js'
import type { PriorityClassLookup } from './strategies/pod.js'
import { internalContext } from './internal-context.js'
import { INITIAL_NAMESPACES, NamespaceController, UPSTREAM_NAMESPACES, namespaceAdmission } from './namespaces.js'
import { NamespaceLister } from './namespace-lister.js'
import { CrdController, customResourceStrategy, type CrdServing } from './crds.js'
import { GarbageCollector } from './garbage-collector.js'
import { resourcePrefix } from './keys.js'
import type { Strategy } from './strategy.js'
import { noCelRules, type CelRules, type CompiledRules } from './cel-rules.js'
import type { ServiceAccountLookup } from './strategies/service-account-admission.js'
import type { SignerPermission } from './strategies/csr.js'
import { chainAdmission, type MutatingAdmission, type WriteAdmission } from './admission.js'
import { admitConnect } from './connect-admission.js'

export interface RegistryOptions {
  /** Serve `*.orch.io` groups under their Kubernetes names too (`--upstream-aliases`, default true). */
  upstreamAliases?: boolean
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
  /**
   * kube-apiserver's ServiceAccount admission on pod creation (the account must exist; its token is mounted). On in
   * `orch up` and `orch apiserver`; off by default so a registry without the serviceaccounts controller takes pods.
   */
  serviceAccountAdmission?: boolean
  /** TokenReview's authenticator (auth/authenticator.ts); without it every TokenReview answers unauthenticated. */
  authenticator?: TokenReviewAuthenticator
  /** --api-audiences: TokenReview's and TokenRequest's default audiences. */
  apiAudiences?: string[]
  /** The access reviews' authorizer; without it SubjectAccessReview and its siblings are not served. */
  authorizer?: Authorizer
  /** SelfSubjectRulesReview's rules; without it that kind is not served. */
  ruleResolver?: RuleResolver
  /** Signs TokenRequest tokens (auth/service-account-tokens.ts); without it serviceaccounts/token is not served. */
  tokenIssuer?: TokenIssuer
  /** --service-account-max-token-expiration in seconds (0 or absent: no cap). */
  maxTokenExpirationSeconds?: number
  /**
   * Who may approve CSRs of a signer and sign for it (auth/signer-permission.ts builds it from an Authorizer);
   * without it, anyone who may update certificatesigningrequests/approval or /status may.
   */
  signerPermission?: SignerPermission
  /**
   * Checks of who writes, in order (RBAC escalation prevention, NodeRestriction): see admission.ts. They are
   * objects the caller may complete after the registry exists (an RBAC authorizer watches this registry).
   */
  admission?: WriteAdmission[]
  /** Mutating admission plugins, in order (before validation; see admission.ts). */
  mutatingAdmission?: MutatingAdmission[]
  /**
   * Built-in admission steps turned off by their plugin names: NamespaceLifecycle, Priority, DefaultTolerationSeconds,
   * CertificateApproval, CertificateSigning, CertificateSubjectRestriction (admission/build.ts computes them).
   */
  disabledAdmission?: string[]
  /** Compiles admission webhook configurations' matchConditions when they are written (the CEL sandbox pool). */
  webhookExpressions?: ExpressionEvaluator
  /** Compiles ValidatingAdmissionPolicy expressions when policies are written (the sandbox pool). */
  policyExpressions?: ExpressionEvaluator
  /** The WatchList feature gate: without it a watch's sendInitialEvents answers 422 (default off, as in v1.29). */
  watchList?: boolean
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
  /** Create-only, never-stored resources (reviews): served, listed in discovery, but no store behind them. */
  const creaters = new Map<string, Creater>()
  const builtinPlurals = new Set<string>()
  const crdKeys = new Map<string, { keys: string[], fingerprint: string, rules: CompiledRules[] }>()
  const cel = o.celRules ?? noCelRules
  const listeners = new Set<() => void>()
  const retired: GenericStore[] = []
  let started = false
  const admission = chainAdmission(o.admission ?? [])
  const mutating = chainAdmission(o.mutatingAdmission ?? [])
  /** The namespace gate's memory, kept by the namespace controller's watch (empty until it starts). */
  const namespaceLister = new NamespaceLister()

  const makeStore = (def: ResourceDefinition, strategy: Strategy | undefined): GenericStore => new GenericStore({
    store: o.store,
    definition: def,
    strategy,
    clock,
    logger: o.logger,
    revisionWaitMs: o.revisionWaitMs,
    bookmarkIntervalMs: o.bookmarkIntervalMs,
    admitNamespace: def.namespaced && !(o.disabledAdmission ?? []).includes('NamespaceLifecycle') ? namespaceAdmission(o.store, { group: def.group, resource: def.plural }, namespaceLister) : undefined,
    admission,
    mutating,
    watchList: o.watchList,
    upstreamAliases: o.upstreamAliases !== false
  })

  const priorityClassStore = (): GenericStore | undefined => handlers.get(keyOf('scheduling.orch.io', 'v1', 'priorityclasses'))
  const system = internalContext('system:apiserver')
  const priorityClasses: PriorityClassLookup = {
    async byName (name) {
      const h = priorityClassStore()
      if (h === undefined) return undefined
      try { const got = await h.get(system, '', name, {}); return Buffer.isBuffer(got) ? JSON.parse(got.toString('utf8')) : got.object } catch { return undefined }
    },
    async globalDefault () {
      const h = priorityClassStore()
      if (h === undefined) return undefined
      const all = (await h.list(system, '', {})).items.map(b => JSON.parse(b.toString('utf8')) as Record<string, unknown>)
      return all.filter(pc => pc.globalDefault === true).sort((a, b) => Number(a.value) - Number(b.value))[0]
    }
  }

  const serviceAccounts: ServiceAccountLookup | undefined = o.serviceAccountAdmission !== true ? undefined : async (namespace, name) => {
    const h = handlers.get(keyOf('', 'v1', 'serviceaccounts'))
    if (h === undefined) return undefined
    try { const got = await h.get(system, namespace, name, {}); return Buffer.isBuffer(got) ? JSON.parse(got.toString('utf8')) : got.object } catch { return undefined }
  }

  let builtins = o.definitions ?? builtinDefinitions()
  // `*.orch.io` kinds are served under their Kubernetes group names too, as the same stored objects; the
  // Kubernetes name carries the short names and categories, so `kubectl get crd` is not ambiguous.
  const aliases = o.upstreamAliases === false
    ? []
    : builtins.flatMap(def => {
      const upstream = upstreamGroup(def.group)
      if (upstream === undefined) return []
      const alias: ResourceDefinition = { ...def, group: upstream, storageGroup: def.storageGroup ?? def.group }
      if (def.deprecated !== undefined) alias.deprecated = { ...def.deprecated, warning: def.deprecated.warning.replaceAll(def.group, upstream) }
      return [alias]
    })
  if (aliases.length > 0) {
    builtins = builtins.map(def => upstreamGroup(def.group) === undefined ? def : { ...def, shortNames: [], categories: [] })
  }
  for (const def of [...builtins, ...aliases]) {
    builtinPlurals.add(`${def.plural}.${def.group}`)
    if (def.virtual === true) continue
    handlers.set(keyOf(def.group, def.version, def.plural), makeStore(def, builtinStrategy(def, { ...o, priorityClasses, serviceAccounts })))
  }
  const reviews = createReviews([...builtins, ...aliases].filter(d => d.virtual === true), {
    authenticator: o.authenticator, apiAudiences: o.apiAudiences, authorizer: o.authorizer, ruleResolver: o.ruleResolver, now: () => clock.now()
  })
  for (const c of reviews) creaters.set(keyOf(c.definition.group, c.definition.version, c.definition.plural), c)
  const changed = (): void => { for (const l of listeners) { try { l() } catch (err) { o.logger.warn({ err }, 'definitions listener failed') } } }
  const must = (g: string, v: string, p: string): GenericStore => {
    const h = handlers.get(keyOf(g, v, p))
    if (h === undefined) throw new Error(`registry: ${p}.${g}/${v} is not served`)
    return h
  }

  let crdController: CrdController | undefined
  /** Serve/unserve calls per CRD name, so a serve that awaited its rules knows whether it is still the latest. */
  const turns = new Map<string, number>()
  const serving: CrdServing = {
    async serve (crdName, defs) {
      await cel.prepare(defs.map(d => [d.schema, d.definitions]))
      const clash = defs.find(d => builtinPlurals.has(`${d.plural}.${d.group}`) ||
        [...crdKeys].some(([other, e]) => other !== crdName && e.keys.some(k => k.endsWith(`/${d.plural}`) && k.startsWith(`${d.group}/`))))
      if (clash !== undefined) return `"${clash.plural}" is already in use`
      const fingerprint = JSON.stringify(defs)
      if (crdKeys.get(crdName)?.fingerprint === fingerprint) return undefined
      // Rules compile off the event loop: a later serve or unserve of the same CRD meanwhile wins.
      const turn = (turns.get(crdName) ?? 0) + 1
      turns.set(crdName, turn)
      const compiled: CompiledRules[] = []
      for (const def of defs) {
        const r = await cel.compile(def.schema, def.definitions, 'openAPIV3Schema')
        if (!r.ok) { for (const c of compiled) c.release(); return `validation rules of ${def.version} do not compile: ${r.errors.map(e => `${e.field}: ${e.message}`).join('; ')}` }
        compiled.push(r.rules)
      }
      if (turns.get(crdName) !== turn) { for (const c of compiled) c.release(); return undefined }
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
      turns.set(crdName, (turns.get(crdName) ?? 0) + 1)
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
    logger: o.logger, retryMs: o.controllerRetryMs, rewatchMs: o.controllerRetryMs, lister: namespaceLister,
    initialNamespaces: aliases.length > 0 ? [...INITIAL_NAMESPACES, ...UPSTREAM_NAMESPACES] : INITIAL_NAMESPACES
  })
  const crdHandler = handlers.get(keyOf('apiextensions.orch.io', 'v1', 'customresourcedefinitions'))
  if (crdHandler !== undefined) {
    crdController = new CrdController({ store: o.store, crds: crdHandler, serving, clock, logger: o.logger, retryMs: o.controllerRetryMs })
  }

  const subresources = new Map<string, SubresourceCreater>()
  const pods = handlers.get(keyOf('', 'v1', 'pods'))
  if (pods !== undefined) subresources.set(keyOf('', 'v1', 'pods') + '/binding', createBindingSubresource(pods, () => clock.now()))
  const budgets = handlers.get(keyOf('policy', 'v1', 'poddisruptionbudgets'))
  if (pods !== undefined && budgets !== undefined) {
    subresources.set(keyOf('', 'v1', 'pods') + '/eviction', createEvictionSubresource(pods, budgets, () => clock.now()))
  }

  const accountStore = handlers.get(keyOf('', 'v1', 'serviceaccounts'))
  const secrets = handlers.get(keyOf('', 'v1', 'secrets'))
  if (o.tokenIssuer !== undefined && accountStore !== undefined && pods !== undefined && secrets !== undefined) {
    subresources.set(keyOf('', 'v1', 'serviceaccounts') + '/token', createTokenRequestSubresource({
      serviceAccounts: accountStore, pods, secrets, issuer: o.tokenIssuer, apiAudiences: o.apiAudiences ?? [],
      maxExpirationSeconds: o.maxTokenExpirationSeconds, now: () => clock.now()
    }))
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
      return [...handlers.values(), ...creaters.values()].map(h => h.definition)
        .sort((a, b) => a.group.localeCompare(b.group) || a.version.localeCompare(b.version) || a.plural.localeCompare(b.plural))
    },
    handler (group, version, plural): ResourceHandler | undefined {
      return handlers.get(keyOf(group, version, plural))
    },
    creater (group, version, plural) {
      return creaters.get(keyOf(group, version, plural))
    },
    subresource (group, version, plural, subresource) {
      return subresources.get(`${keyOf(group, version, plural)}/${subresource}`)
    },
    async admitConnect (ctx, target, options) {
      await admitConnect({ mutating, validating: admission }, handlers.get(keyOf(target.group, target.version, target.resource)), ctx, target, options)
    },
    subresourceNames (group, version, plural) {
      const prefix = `${keyOf(group, version, plural)}/`
      return [...subresources.keys()].filter(k => k.startsWith(prefix)).map(k => k.slice(prefix.length))
    },
    knownNamespace (name) {
      return namespaceLister.object(name)
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
