// Policies and bindings as the registry's watches report them, and each policy compiled once per generation.

import type { Registry, RequestContext, WatchSink, WatchSubscription, ApiWatchEvent } from '../../registry/types.js'
import type { ExpressionEvaluator } from '../../../sandbox/expression-evaluator.js'
import { compilePolicy, type CompiledPolicy } from './compile.js'
import type { BindingObject, PolicyObject } from './types.js'

export const GROUP = 'admissionregistration.orch.io'
export const VERSION = 'v1beta1'

export const internalContext = (): RequestContext =>
  ({ user: { username: 'system:apiserver', groups: ['system:masters'] }, dryRun: false, fieldValidation: 'Ignore', warnings: [] })

/** One kind's objects by name, kept from a list and then a watch (restarted when it ends). */
class Mirror<T extends { metadata: { name: string } }> {
  readonly items = new Map<string, T>()
  private sub?: WatchSubscription
  private stopped = false

  constructor (private readonly registry: Registry, private readonly plural: string, private readonly onChange: (old: T | undefined, now: T | undefined) => void) {}

  async start (): Promise<void> {
    const h = this.registry.handler(GROUP, VERSION, this.plural)
    if (h === undefined || this.stopped) return
    const listed = await h.list(internalContext(), '', {})
    const seen = new Set<string>()
    for (const b of listed.items) { const o = JSON.parse(b.toString()) as T; seen.add(o.metadata.name); this.put(o) }
    for (const name of [...this.items.keys()]) if (!seen.has(name)) this.remove(name)
    const sink: WatchSink = {
      write: (chunks) => { for (const c of chunks) this.apply(JSON.parse(c.toString())) },
      end: () => { if (!this.stopped) setTimeout(() => { void this.start().catch(() => {}) }, 500).unref() }
    }
    const encoder = { key: 'vap-json', encode: (ev: ApiWatchEvent) => Buffer.concat([Buffer.from(`{"type":"${ev.type}","object":`), ev.raw, Buffer.from('}')]) }
    this.sub = await h.watch(internalContext(), '', { resourceVersion: listed.resourceVersion }, encoder, sink)
  }

  stop (): void { this.stopped = true; this.sub?.stop() }

  private apply (ev: { type: string, object: T }): void {
    if (ev.type === 'ADDED' || ev.type === 'MODIFIED') this.put(ev.object)
    else if (ev.type === 'DELETED') this.remove(ev.object.metadata.name)
  }

  private put (o: T): void { const old = this.items.get(o.metadata.name); this.items.set(o.metadata.name, o); this.onChange(old, o) }
  private remove (name: string): void { const old = this.items.get(name); this.items.delete(name); this.onChange(old, undefined) }
}

export interface PolicySource {
  policies: Map<string, PolicyObject>
  bindings: Map<string, BindingObject>
  /** Counts changes to policies and bindings (what is kept from them is stale once it moves). */
  generation(): number
  /** The policy compiled at its current generation (cached); undefined when an expression does not compile. */
  compiled(policy: PolicyObject): Promise<CompiledPolicy | undefined>
  start(): Promise<void>
  stop(): void
}

/** `authz()`: the evaluator of expressions using `authorizer` (absent: they run on `evaluator` and are denied). */
export function createPolicySource (registry: Registry, evaluator: ExpressionEvaluator, authz: () => ExpressionEvaluator | undefined = () => undefined): PolicySource {
  const cache = new Map<string, { key: string, compiled: Promise<CompiledPolicy | undefined> }>()
  const keyOf = (p: PolicyObject): string => `${p.metadata.uid ?? ''}/${p.metadata.generation ?? 0}`
  const drop = (name: string): void => {
    const c = cache.get(name)
    cache.delete(name)
    void c?.compiled.then(x => x?.release())
  }
  let generation = 0
  const policies = new Mirror<PolicyObject>(registry, 'validatingadmissionpolicies', (old, now) => {
    generation++
    if (old !== undefined && (now === undefined || keyOf(old) !== keyOf(now))) drop(old.metadata.name)
  })
  const bindings = new Mirror<BindingObject>(registry, 'validatingadmissionpolicybindings', () => { generation++ })
  return {
    policies: policies.items,
    bindings: bindings.items,
    generation: () => generation,
    async compiled (p) {
      const key = keyOf(p)
      let c = cache.get(p.metadata.name)
      if (c === undefined || c.key !== key) {
        if (c !== undefined) drop(p.metadata.name)
        const compiled = compilePolicy(evaluator, p.spec ?? {}, 'spec', authz()).then(({ policy, errors }) => {
          if (errors.length === 0) return policy
          policy.release()
          return undefined
        })
        c = { key, compiled }
        cache.set(p.metadata.name, c)
      }
      return await c.compiled
    },
    async start () { await policies.start(); await bindings.start() },
    stop () {
      policies.stop(); bindings.stop()
      for (const name of [...cache.keys()]) drop(name)
    }
  }
}
