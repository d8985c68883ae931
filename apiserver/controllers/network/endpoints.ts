// The Endpoints controller: one Endpoints object per selector Service, listing its pods' addresses by readiness and port set.

import { QueueController, type ControllerContext, type ReconcileResult } from '../controller.js'
import { RESOURCES, type Obj } from '../client/types.js'
import { keyOf, splitKey, type SharedInformer } from '../informer.js'
import { labelsOf, mapSelectorMatches } from '../labels.js'
import { backendsOf, targetRef } from './service-pods.js'

/** Pods changed: every Service of the namespace selecting the pod before or after is queued. */
export function serviceKeysFor (services: SharedInformer, pod: Obj, old?: Obj): string[] {
  const ns = String(pod.metadata?.namespace)
  return services.list(ns).filter(s => mapSelectorMatches(s.spec?.selector, labelsOf(pod)) || (old !== undefined && mapSelectorMatches(s.spec?.selector, labelsOf(old)))).map(keyOf)
}

export class EndpointsController extends QueueController {
  private readonly services: SharedInformer
  private readonly pods: SharedInformer
  private readonly endpoints: SharedInformer

  constructor (c: ControllerContext) {
    super('endpoint', c)
    this.services = c.informers.informer(RESOURCES.services)
    this.pods = c.informers.informer(RESOURCES.pods)
    this.endpoints = c.informers.informer(RESOURCES.endpoints)
  }

  protected watch (): void {
    this.services.addEventHandler({ add: s => this.queue.add(keyOf(s)), update: (_o, s) => this.queue.add(keyOf(s)), delete: s => this.queue.add(keyOf(s)) })
    this.pods.addEventHandler({
      add: p => { for (const k of serviceKeysFor(this.services, p)) this.queue.add(k) },
      update: (o, p) => { for (const k of serviceKeysFor(this.services, p, o)) this.queue.add(k) },
      delete: p => { for (const k of serviceKeysFor(this.services, p)) this.queue.add(k) }
    })
  }

  async reconcile (key: string): Promise<ReconcileResult | void> {
    const [namespace, name] = splitKey(key)
    const svc = this.services.get(key)
    const client = this.c.client.resource(RESOURCES.endpoints)
    if (svc === undefined) {
      if (this.endpoints.get(key) === undefined) return
      try { await client.delete(namespace, name) } catch (err) { if ((err as { code?: number }).code !== 404) throw err }
      return
    }
    // A Service without a selector has Endpoints its user manages.
    if (svc.spec?.selector === undefined || Object.keys(svc.spec.selector).length === 0) return
    const publishNotReady = svc.spec?.publishNotReadyAddresses === true
    const groups = new Map<string, Obj>()
    for (const b of backendsOf(svc, this.pods.list(namespace))) {
      if (b.terminating && !publishNotReady) continue
      if (b.ports.length === 0 && (svc.spec?.ports ?? []).length > 0) continue
      const portKey = JSON.stringify(b.ports)
      let subset = groups.get(portKey)
      if (subset === undefined) { subset = { ports: b.ports }; groups.set(portKey, subset) }
      const address = { ip: b.ip, ...(b.pod.spec?.nodeName ? { nodeName: b.pod.spec.nodeName } : {}), targetRef: targetRef(b.pod) }
      const list = b.ready || publishNotReady ? 'addresses' : 'notReadyAddresses'
      subset[list] = [...(subset[list] ?? []), address]
    }
    const subsets = [...groups.values()].map(s => (s.ports.length === 0 ? { ...s, ports: undefined } : s)).map(s => JSON.parse(JSON.stringify(s)) as Obj)
    const labels: Record<string, string> = { ...(svc.metadata?.labels ?? {}) }
    if (svc.spec?.clusterIP === 'None') labels['service.kubernetes.io/headless'] = ''
    const current = this.endpoints.get(key)
    const wanted = { apiVersion: 'v1', kind: 'Endpoints', metadata: { name, namespace, labels }, ...(subsets.length > 0 ? { subsets } : {}) }
    if (current === undefined) {
      await client.create(namespace, wanted)
      return
    }
    const same = JSON.stringify(current.subsets ?? []) === JSON.stringify(subsets) && JSON.stringify(current.metadata?.labels ?? {}) === JSON.stringify(labels)
    if (same) return
    await client.update(namespace, { ...current, metadata: { ...current.metadata, labels }, subsets: subsets.length > 0 ? subsets : undefined })
  }
}
