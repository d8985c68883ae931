// The MutatingAdmissionWebhook and ValidatingAdmissionWebhook plugins of the registry's admission chain.

import type { MutatingAdmission, WriteAdmission, WriteAttributes } from '../../registry/admission.js'
import type { Registry } from '../../registry/types.js'
import { WebhookDispatcher, type Invocation, type WebhookDeps } from './dispatcher.js'
import { applyResponsePatch, denial, recordSideChannels } from './review.js'

export type { WebhookDeps } from './dispatcher.js'

/** Lifecycle of a webhook plugin: made before the registry, started on it once it runs (it watches the configurations). */
export interface WebhookPluginLifecycle {
  start(registry: Registry): Promise<void>
  stop(): Promise<void>
  /** Names of the webhooks the plugin currently knows (configurations in name order). */
  webhookNames(): string[]
}

/**
 * Mutating webhooks, in order; each answer's JSONPatch is applied to the object before the next call. A webhook with
 * reinvocationPolicy IfNeeded is called once more when a later webhook of this plugin changed the object after it, or
 * (through `reinvocation`, placed last in the mutating chain) when a later plugin did.
 */
export function createMutatingWebhookPlugin (deps: WebhookDeps): MutatingAdmission & WebhookPluginLifecycle & { reinvocation: MutatingAdmission } {
  const d = new WebhookDispatcher('mutatingwebhookconfigurations', deps)
  /** The IfNeeded webhooks called for a write and the object as this plugin left it. */
  const pending = new WeakMap<WriteAttributes, { invocations: Invocation[]; after: string }>()
  /** Calls one webhook and applies its answer; true when it changed the object. */
  const invoke = async (inv: Invocation, a: WriteAttributes): Promise<boolean> => {
    const r = await d.call(inv, a)
    if (r === undefined) return false
    // Warnings and annotations count even from a webhook that refuses, as in kube-apiserver.
    recordSideChannels(inv.hook.name, r, a)
    if (r.allowed !== true) throw denial(inv.hook.name, r)
    try { return applyResponsePatch(r, a) } catch (err) { d.failed(inv.hook, err); return false }
  }
  return {
    start: async (registry) => { await d.start(registry) },
    stop: async () => { await d.stop() },
    webhookNames: () => d.webhooks().map(h => h.name),
    async admit (a) {
      const invocations = await d.invocations(a)
      if (invocations.length === 0) return // the usual case: no webhook matches, nothing to call or remember
      let lastChange = -1
      for (const [i, inv] of invocations.entries()) if (await invoke(inv, a)) lastChange = i
      const reinvoked = new Set<Invocation>()
      for (const [i, inv] of invocations.entries()) {
        if (inv.hook.reinvocationPolicy === 'IfNeeded' && i < lastChange) { reinvoked.add(inv); await invoke(inv, a) }
      }
      const ifNeeded = invocations.filter(inv => inv.hook.reinvocationPolicy === 'IfNeeded' && !reinvoked.has(inv))
      if (ifNeeded.length > 0) pending.set(a, { invocations: ifNeeded, after: JSON.stringify(a.object) })
    },
    reinvocation: {
      async admit (a) {
        const p = pending.get(a)
        pending.delete(a)
        if (p === undefined || JSON.stringify(a.object) === p.after) return
        for (const inv of p.invocations) await invoke(inv, a)
      }
    }
  }
}

/** Validating webhooks, called in parallel; the first refusal in webhook order wins. */
export function createValidatingWebhookPlugin (deps: WebhookDeps): WriteAdmission & WebhookPluginLifecycle {
  const d = new WebhookDispatcher('validatingwebhookconfigurations', deps)
  return {
    start: async (registry) => { await d.start(registry) },
    stop: async () => { await d.stop() },
    webhookNames: () => d.webhooks().map(h => h.name),
    async admit (a) {
      const invocations = await d.invocations(a)
      if (invocations.length === 0) return
      const results = await Promise.allSettled(invocations.map(async inv => {
        const r = await d.call(inv, a)
        if (r === undefined) return
        recordSideChannels(inv.hook.name, r, a)
        if (r.allowed !== true) throw denial(inv.hook.name, r)
      }))
      for (const r of results) if (r.status === 'rejected') throw r.reason
    }
  }
}
