// The EndpointSlice controller: slices (at most 100 endpoints each) of a selector Service's pods, and mirrors of the
// Endpoints of a Service without a selector, labelled as Kubernetes' two controllers label them.

import { QueueController, type ControllerContext, type ReconcileResult } from '../controller.js'
import { RESOURCES, type Obj } from '../client/types.js'
import { keyOf, splitKey, type SharedInformer } from '../informer.js'
import { backendsOf, targetRef } from './service-pods.js'
import { serviceKeysFor } from './endpoints.js'

export const SERVICE_NAME_LABEL = 'kubernetes.io/service-name'
export const MANAGED_BY_LABEL = 'endpointslice.kubernetes.io/managed-by'
export const SLICE_CONTROLLER = 'endpointslice-controller.k8s.io'
export const MIRRORING_CONTROLLER = 'endpointslicemirroring-controller.k8s.io'
const MAX_ENDPOINTS = 100

type Slice = Obj

export class EndpointSliceController extends QueueController {
  private readonly services: SharedInformer
  private readonly pods: SharedInformer
  private readonly endpoints: SharedInformer
  private readonly slices: SharedInformer
  /** Slices written but perhaps not yet in the informer, by name: a quick second pass must not create them again. */
  private readonly written = new Map<string, Slice>()
  private readonly removed = new Set<string>()

  constructor (c: ControllerContext) {
    super('endpointslice', c)
    this.services = c.informers.informer(RESOURCES.services)
    this.pods = c.informers.informer(RESOURCES.pods)
    this.endpoints = c.informers.informer(RESOURCES.endpoints)
    this.slices = c.informers.informer(RESOURCES.endpointSlices)
  }

  protected watch (): void {
    const byKey = (o: Obj): void => this.queue.add(keyOf(o))
    this.services.addEventHandler({ add: byKey, update: (_o, s) => byKey(s), delete: byKey })
    this.endpoints.addEventHandler({ add: byKey, update: (_o, e) => byKey(e), delete: byKey })
    this.pods.addEventHandler({
      add: p => { for (const k of serviceKeysFor(this.services, p)) this.queue.add(k) },
      update: (o, p) => { for (const k of serviceKeysFor(this.services, p, o)) this.queue.add(k) },
      delete: p => { for (const k of serviceKeysFor(this.services, p)) this.queue.add(k) }
    })
    this.slices.addEventHandler({
      delete: s => { const svc = s.metadata?.labels?.[SERVICE_NAME_LABEL]; if (svc !== undefined) this.queue.add(`${String(s.metadata.namespace)}/${String(svc)}`) }
    })
  }

  async reconcile (key: string): Promise<ReconcileResult | void> {
    const [namespace, name] = splitKey(key)
    const svc = this.services.get(key)
    const existing = this.currentSlices(namespace).filter(s => s.metadata?.labels?.[SERVICE_NAME_LABEL] === name)
    if (svc === undefined) { await this.deleteSlices(existing); return }
    const selectorless = svc.spec?.selector === undefined || Object.keys(svc.spec.selector).length === 0
    const managedBy = selectorless ? MIRRORING_CONTROLLER : SLICE_CONTROLLER
    const mine = existing.filter(s => s.metadata?.labels?.[MANAGED_BY_LABEL] === managedBy)
    const others = existing.filter(s => s.metadata?.labels?.[MANAGED_BY_LABEL] !== managedBy &&
      (s.metadata?.labels?.[MANAGED_BY_LABEL] === SLICE_CONTROLLER || s.metadata?.labels?.[MANAGED_BY_LABEL] === MIRRORING_CONTROLLER))
    await this.deleteSlices(others)
    const wanted = selectorless ? this.mirrored(svc, this.endpoints.get(key)) : this.fromPods(svc, namespace)
    await this.converge(svc, managedBy, mine, wanted)
  }

  /** The informer's slices, with what this controller wrote or deleted since laid over them. */
  private currentSlices (namespace: string): Slice[] {
    const byName = new Map<string, Slice>()
    for (const s of this.slices.list(namespace)) byName.set(String(s.metadata.name), s)
    for (const [k, s] of this.written) {
      if (String(s.metadata.namespace) !== namespace) continue
      const seen = byName.get(String(s.metadata.name))
      if (seen !== undefined && Number(seen.metadata.resourceVersion) >= Number(s.metadata.resourceVersion)) { this.written.delete(k); continue }
      byName.set(String(s.metadata.name), s)
    }
    for (const k of this.removed) {
      const [ns, n] = k.split('/')
      if (ns !== namespace) continue
      if (this.slices.get(k) === undefined) this.removed.delete(k)
      byName.delete(n)
    }
    return [...byName.values()]
  }

  /** Endpoint groups by port set, each cut into slices of at most 100. */
  private fromPods (svc: Obj, namespace: string): Array<{ ports: Obj[], endpoints: Obj[] }> {
    const groups = new Map<string, { ports: Obj[], endpoints: Obj[] }>()
    const publishNotReady = svc.spec?.publishNotReadyAddresses === true
    for (const b of backendsOf(svc, this.pods.list(namespace))) {
      const k = JSON.stringify(b.ports)
      let g = groups.get(k)
      if (g === undefined) { g = { ports: b.ports, endpoints: [] }; groups.set(k, g) }
      g.endpoints.push({
        addresses: [b.ip],
        conditions: { ready: publishNotReady || b.ready, serving: b.ready, terminating: b.terminating },
        ...(b.pod.spec?.nodeName ? { nodeName: b.pod.spec.nodeName } : {}),
        targetRef: targetRef(b.pod)
      })
    }
    return [...groups.values()]
  }

  /** The user's Endpoints of a Service without a selector, as slices. */
  private mirrored (svc: Obj, ep: Obj | undefined): Array<{ ports: Obj[], endpoints: Obj[] }> {
    if (ep === undefined) return []
    void svc
    return ((ep.subsets ?? []) as Obj[]).map(s => ({
      ports: ((s.ports ?? []) as Obj[]).map(p => ({ ...(p.name ? { name: p.name } : {}), port: p.port, protocol: p.protocol ?? 'TCP' })),
      endpoints: [
        ...((s.addresses ?? []) as Obj[]).map(a => ({ addresses: [a.ip], conditions: { ready: true }, ...(a.nodeName ? { nodeName: a.nodeName } : {}), ...(a.targetRef ? { targetRef: a.targetRef } : {}) })),
        ...((s.notReadyAddresses ?? []) as Obj[]).map(a => ({ addresses: [a.ip], conditions: { ready: false }, ...(a.nodeName ? { nodeName: a.nodeName } : {}), ...(a.targetRef ? { targetRef: a.targetRef } : {}) }))
      ]
    }))
  }

  /** Reuses existing slices in order, creates what is missing, deletes what is left over. */
  private async converge (svc: Obj, managedBy: string, current: Slice[], groups: Array<{ ports: Obj[], endpoints: Obj[] }>): Promise<void> {
    const client = this.c.client.resource(RESOURCES.endpointSlices)
    const namespace = String(svc.metadata.namespace)
    const labels = { ...(svc.metadata?.labels ?? {}), [SERVICE_NAME_LABEL]: String(svc.metadata.name), [MANAGED_BY_LABEL]: managedBy }
    const wanted: Array<{ ports: Obj[], endpoints: Obj[] }> = []
    const max = this.c.settings.maxEndpointsPerSlice ?? MAX_ENDPOINTS
    for (const g of groups) for (let i = 0; i < g.endpoints.length; i += max) wanted.push({ ports: g.ports, endpoints: g.endpoints.slice(i, i + max) })
    // A Service with no endpoints still has one (empty) slice, as Kubernetes keeps a placeholder.
    if (wanted.length === 0 && managedBy === SLICE_CONTROLLER) wanted.push({ ports: [], endpoints: [] })
    const sorted = [...current].sort((a, b) => String(a.metadata.name).localeCompare(String(b.metadata.name)))
    for (let i = 0; i < wanted.length; i++) {
      const w = wanted[i]
      const old = sorted[i]
      const body = { addressType: 'IPv4', endpoints: w.endpoints, ports: w.ports }
      if (old === undefined) {
        const made = await client.create(namespace, {
          apiVersion: 'discovery.orch.io/v1', kind: 'EndpointSlice',
          metadata: { generateName: `${String(svc.metadata.name)}-`, namespace, labels,
            ownerReferences: [{ apiVersion: 'v1', kind: 'Service', name: svc.metadata.name, uid: svc.metadata.uid, controller: true, blockOwnerDeletion: true }] },
          ...body
        })
        this.written.set(`${namespace}/${String(made.metadata.name)}`, made)
        continue
      }
      const same = JSON.stringify(old.endpoints ?? []) === JSON.stringify(w.endpoints) && JSON.stringify(old.ports ?? []) === JSON.stringify(w.ports) &&
        JSON.stringify(old.metadata?.labels ?? {}) === JSON.stringify(labels)
      if (!same) {
        const updated = await client.update(namespace, { ...old, metadata: { ...old.metadata, labels }, ...body })
        this.written.set(`${namespace}/${String(updated.metadata.name)}`, updated)
      }
    }
    await this.deleteSlices(sorted.slice(wanted.length))
  }

  private async deleteSlices (slices: Slice[]): Promise<void> {
    for (const s of slices) {
      const k = `${String(s.metadata.namespace)}/${String(s.metadata.name)}`
      this.written.delete(k)
      this.removed.add(k)
      try { await this.c.client.resource(RESOURCES.endpointSlices).delete(String(s.metadata.namespace), String(s.metadata.name)) } catch (err) {
        if ((err as { code?: number }).code !== 404) throw err
      }
    }
  }
}
