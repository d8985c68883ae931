// The resource quota controller: keeps each ResourceQuota's status (hard and used) current for counts and compute
// resources, recomputed when what it counts changes and at least every sync period.

import { QueueController, type ControllerContext, type ReconcileResult } from '../controller.js'
import { RESOURCES, type Obj, type Resource } from '../client/types.js'
import { keyOf, splitKey, type SharedInformer } from '../informer.js'
import { writeStatus } from '../status-patch.js'
import { milli, quantity } from '../../scheduler/resources.js'
// Which pods a quota's scopes take is the admission plugin's rule: one owner for both the charge and the recount.
import { podInScopes as inScopes } from '../../admission/quota/usage.js'

/** ResourceQuotaSyncPeriod (Kubernetes: 5 minutes). */
const SYNC_PERIOD_MS = 5 * 60_000
const PVCS: Resource = { group: '', version: 'v1', resource: 'persistentvolumeclaims', namespaced: true }
const SECRETS: Resource = { group: '', version: 'v1', resource: 'secrets', namespaced: true }

const active = (p: Obj): boolean => p.status?.phase !== 'Succeeded' && p.status?.phase !== 'Failed'
/** Sum of one compute resource over pods' containers (requests or limits), as Kubernetes' pod evaluator adds them. */
function podSum (pods: Obj[], kind: 'requests' | 'limits', resource: string): number {
  const one = (c: Obj): number => {
    const v = c.resources?.[kind]?.[resource] ?? (kind === 'requests' ? c.resources?.limits?.[resource] : undefined)
    return v === undefined ? 0 : resource === 'cpu' ? milli(v) : quantity(v)
  }
  return pods.reduce((n, p) => n + Math.max(((p.spec?.containers ?? []) as Obj[]).reduce((s, c) => s + one(c), 0),
    ...((p.spec?.initContainers ?? []) as Obj[]).map(one)), 0)
}

/** A quantity as Kubernetes prints it: cpu in cores or millicores, bytes with the largest exact binary suffix. */
export function formatQuantity (value: number, resource: string): string {
  if (resource.endsWith('cpu')) return value % 1000 === 0 ? String(value / 1000) : `${value}m`
  if (value === 0 || !Number.isInteger(value)) return String(value)
  for (const [s, f] of [['Ei', 2 ** 60], ['Pi', 2 ** 50], ['Ti', 2 ** 40], ['Gi', 2 ** 30], ['Mi', 2 ** 20], ['Ki', 2 ** 10]] as const) {
    if (value % f === 0) return `${value / f}${s}`
  }
  return String(value)
}

export class ResourceQuotaController extends QueueController {
  private readonly quotas: SharedInformer
  private readonly counted: Record<string, SharedInformer>

  constructor (c: ControllerContext) {
    super('resourcequota', c)
    this.quotas = c.informers.informer(RESOURCES.resourceQuotas)
    this.counted = {
      pods: c.informers.informer(RESOURCES.pods),
      services: c.informers.informer(RESOURCES.services),
      configmaps: c.informers.informer(RESOURCES.configMaps),
      secrets: c.informers.informer(SECRETS),
      persistentvolumeclaims: c.informers.informer(PVCS),
      replicationcontrollers: c.informers.informer(RESOURCES.replicationControllers),
      resourcequotas: this.quotas
    }
  }

  protected watch (): void {
    this.quotas.addEventHandler({ add: q => this.queue.add(keyOf(q)), update: (o, q) => { if (JSON.stringify(o.spec) !== JSON.stringify(q.spec)) this.queue.add(keyOf(q)) } })
    const touch = (o: Obj): void => { for (const q of this.quotas.list(String(o.metadata?.namespace ?? ''))) this.queue.add(keyOf(q)) }
    for (const [name, inf] of Object.entries(this.counted)) {
      if (name === 'resourcequotas') continue
      inf.addEventHandler({ add: touch, update: (_o, x) => touch(x), delete: touch })
    }
  }

  async reconcile (key: string): Promise<ReconcileResult | void> {
    const quota = this.quotas.get(key)
    if (quota === undefined) return
    const [namespace] = splitKey(key)
    const hard = (quota.spec?.hard ?? {}) as Record<string, string>
    const pods = this.counted.pods.list(namespace).filter(p => active(p) && inScopes(quota, p))
    const used: Record<string, string> = {}
    for (const name of Object.keys(hard)) {
      const v = await this.usage(name, namespace, pods)
      if (v !== undefined) used[name] = v
    }
    await writeStatus(this.c, RESOURCES.resourceQuotas, quota, { hard: { ...hard }, used })
    return { requeueAfterMs: this.c.settings.resourceQuotaSyncPeriodMs ?? SYNC_PERIOD_MS }
  }

  /** Current usage of one quota resource name; undefined for a name this controller does not track. */
  private async usage (name: string, namespace: string, pods: Obj[]): Promise<string | undefined> {
    const compute = /^(requests\.|limits\.)?(cpu|memory|ephemeral-storage)$/.exec(name)
    if (compute !== null) return formatQuantity(podSum(pods, compute[1] === 'limits.' ? 'limits' : 'requests', compute[2]), compute[2])
    if (name === 'pods' || name === 'count/pods') return String(pods.length)
    if (name === 'services.nodeports' || name === 'services.loadbalancers') {
      const type = name === 'services.nodeports' ? 'NodePort' : 'LoadBalancer'
      const svcs = this.counted.services.list(namespace).filter(s => s.spec?.type === type || (type === 'NodePort' && s.spec?.type === 'LoadBalancer'))
      return String(type === 'NodePort' ? svcs.reduce((n, s) => n + ((s.spec?.ports ?? []) as Obj[]).filter(p => p.nodePort).length, 0) : svcs.length)
    }
    if (name === 'requests.storage') {
      return formatQuantity(this.counted.persistentvolumeclaims.list(namespace).reduce((n, c) => n + quantity(c.spec?.resources?.requests?.storage ?? 0), 0), 'storage')
    }
    const plain = name.startsWith('count/') ? name.slice('count/'.length) : name
    const inf = this.counted[plain]
    if (inf !== undefined) return String(inf.list(namespace).length)
    // count/<resource>.<group> of any other served resource: listed at each sync.
    const m = /^([a-z0-9-]+)\.(.+)$/.exec(plain)
    if (name.startsWith('count/') && m !== null) {
      for (const version of ['v1', 'v1beta1']) {
        try {
          return String((await this.c.client.resource({ group: m[2], version, resource: m[1], namespaced: true }).list(namespace)).items.length)
        } catch { /* not served in this version */ }
      }
    }
    return undefined
  }
}
