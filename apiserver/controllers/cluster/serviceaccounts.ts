// The ServiceAccount controller: every active namespace has a `default` ServiceAccount, recreated if deleted.

import { QueueController, type ControllerContext, type ReconcileResult } from '../controller.js'
import { RESOURCES, type Obj } from '../client/types.js'
import type { SharedInformer } from '../informer.js'

export class ServiceAccountController extends QueueController {
  private readonly namespaces: SharedInformer
  private readonly accounts: SharedInformer

  constructor (c: ControllerContext, private readonly names: string[] = ['default']) {
    super('serviceaccount', c)
    this.namespaces = c.informers.informer(RESOURCES.namespaces)
    this.accounts = c.informers.informer(RESOURCES.serviceAccounts)
  }

  protected watch (): void {
    this.namespaces.addEventHandler({ add: n => this.queue.add(String(n.metadata.name)), update: (_o, n) => this.queue.add(String(n.metadata.name)) })
    this.accounts.addEventHandler({ delete: (sa: Obj) => { if (this.names.includes(String(sa.metadata.name))) this.queue.add(String(sa.metadata.namespace)) } })
  }

  async reconcile (namespace: string): Promise<ReconcileResult | void> {
    const ns = this.namespaces.get(namespace)
    if (ns === undefined || ns.status?.phase === 'Terminating' || ns.metadata?.deletionTimestamp !== undefined) return
    for (const name of this.names) {
      if (this.accounts.get(`${namespace}/${name}`) !== undefined) continue
      try {
        await this.c.client.resource(RESOURCES.serviceAccounts).create(namespace, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name, namespace } })
      } catch (err) {
        const code = (err as { code?: number }).code
        // 409: it exists already; 403/404: the namespace is going away.
        if (code !== 409 && code !== 403 && code !== 404) throw err
      }
    }
  }
}
