// The root CA publisher: a `kube-root-ca.crt` ConfigMap holding the cluster's CA bundle in every active namespace,
// put back when deleted or changed, as kube-controller-manager's root-ca-cert-publisher does. It runs only when a CA
// bundle is configured (SAController.RootCAFile or --root-ca-file): a plain-HTTP cluster has none to publish.

import { QueueController, type ControllerContext, type ReconcileResult } from '../controller.js'
import { RESOURCES, type Obj } from '../client/types.js'
import type { SharedInformer } from '../informer.js'

export const ROOT_CA_CONFIGMAP = 'kube-root-ca.crt'

export class RootCAPublisher extends QueueController {
  private readonly namespaces: SharedInformer
  private readonly configMaps: SharedInformer

  constructor (c: ControllerContext, private readonly caBundle: string) {
    super('root-ca-cert-publisher', c)
    this.namespaces = c.informers.informer(RESOURCES.namespaces)
    this.configMaps = c.informers.informer(RESOURCES.configMaps)
  }

  protected watch (): void {
    this.namespaces.addEventHandler({ add: n => this.queue.add(String(n.metadata.name)), update: (_o, n) => this.queue.add(String(n.metadata.name)) })
    const onMap = (m: Obj): void => { if (m.metadata?.name === ROOT_CA_CONFIGMAP) this.queue.add(String(m.metadata.namespace)) }
    this.configMaps.addEventHandler({ update: (_o, m) => onMap(m), delete: onMap })
  }

  async reconcile (namespace: string): Promise<ReconcileResult | void> {
    const ns = this.namespaces.get(namespace)
    if (ns === undefined || ns.status?.phase === 'Terminating' || ns.metadata?.deletionTimestamp !== undefined) return
    const client = this.c.client.resource(RESOURCES.configMaps)
    const current = this.configMaps.get(`${namespace}/${ROOT_CA_CONFIGMAP}`)
    const data = { 'ca.crt': this.caBundle }
    const annotations = { 'kubernetes.io/description': 'Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. No other usage is guaranteed across distributions of Kubernetes clusters.' }
    try {
      if (current === undefined) {
        await client.create(namespace, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: ROOT_CA_CONFIGMAP, namespace, annotations }, data })
      } else if (JSON.stringify(current.data ?? {}) !== JSON.stringify(data)) {
        await client.update(namespace, { ...current, data })
      }
    } catch (err) {
      const code = (err as { code?: number }).code
      if (code !== 409 && code !== 403 && code !== 404) throw err
    }
  }
}
