// The node authorizer's graph: which secrets, configmaps, PVCs and service accounts the pods bound to each node reference.

export type Obj = Record<string, any> // eslint-disable-line @typescript-eslint/no-explicit-any

export type RefKind = 'secret' | 'configmap' | 'persistentvolumeclaim' | 'serviceaccount'

export interface PodRef { kind: RefKind, name: string }

/** Every object a pod needs from the API to run: volumes, env and envFrom, image pull secrets, projected sources, its service account. */
export function podReferences (pod: Obj): PodRef[] {
  const spec: Obj = pod.spec ?? {}
  const refs: PodRef[] = []
  const add = (kind: RefKind, name: unknown): void => { if (typeof name === 'string' && name !== '') refs.push({ kind, name }) }
  add('serviceaccount', spec.serviceAccountName ?? 'default')
  for (const s of spec.imagePullSecrets ?? []) add('secret', s?.name)
  for (const v of spec.volumes ?? []) {
    if (v === null || typeof v !== 'object') continue
    add('secret', v.secret?.secretName)
    add('configmap', v.configMap?.name)
    add('persistentvolumeclaim', v.persistentVolumeClaim?.claimName)
    if (v.ephemeral !== undefined) add('persistentvolumeclaim', `${String(pod.metadata?.name ?? '')}-${String(v.name ?? '')}`)
    for (const src of v.projected?.sources ?? []) {
      add('secret', src?.secret?.name)
      add('configmap', src?.configMap?.name)
    }
    // Volume plugins that name a secret for their credentials.
    for (const plugin of ['azureFile', 'cephfs', 'cinder', 'flexVolume', 'iscsi', 'rbd', 'scaleIO', 'storageos', 'csi']) {
      const p = v[plugin]
      add('secret', p?.secretName ?? p?.secretRef?.name ?? p?.nodePublishSecretRef?.name)
    }
  }
  for (const c of [...(spec.initContainers ?? []), ...(spec.containers ?? []), ...(spec.ephemeralContainers ?? [])]) {
    for (const e of c?.env ?? []) {
      add('secret', e?.valueFrom?.secretKeyRef?.name)
      add('configmap', e?.valueFrom?.configMapKeyRef?.name)
    }
    for (const e of c?.envFrom ?? []) {
      add('secret', e?.secretRef?.name)
      add('configmap', e?.configMapRef?.name)
    }
  }
  return refs
}

const refKey = (node: string, kind: RefKind, namespace: string, name: string): string => `${node}\u0000${kind}\u0000${namespace}/${name}`

/** Reference counts per node, updated as pods are bound, changed and removed. */
export class PodGraph {
  /** Pod `namespace/name` -> the node it is bound to and the keys it added. */
  private readonly pods = new Map<string, { node: string, keys: string[] }>()
  private readonly counts = new Map<string, number>()

  /** Records a pod's current state (unbound pods hold no edges). */
  setPod (pod: Obj): void {
    const ns = String(pod.metadata?.namespace ?? '')
    const podKey = `${ns}/${String(pod.metadata?.name ?? '')}`
    this.deletePod(podKey)
    const node = pod.spec?.nodeName
    if (typeof node !== 'string' || node === '') return
    const keys = [...new Set(podReferences(pod).map(r => refKey(node, r.kind, ns, r.name)))]
    for (const k of keys) this.counts.set(k, (this.counts.get(k) ?? 0) + 1)
    this.pods.set(podKey, { node, keys })
  }

  deletePod (podKey: string): void {
    const entry = this.pods.get(podKey)
    if (entry === undefined) return
    this.pods.delete(podKey)
    for (const k of entry.keys) {
      const n = (this.counts.get(k) ?? 1) - 1
      if (n <= 0) this.counts.delete(k)
      else this.counts.set(k, n)
    }
  }

  /** Whether a pod bound to `node` references the object. */
  has (node: string, kind: RefKind, namespace: string, name: string): boolean {
    return this.counts.has(refKey(node, kind, namespace, name))
  }

  /** The node a pod is bound to, as far as the graph knows. */
  nodeOf (namespace: string, name: string): string | undefined {
    return this.pods.get(`${namespace}/${name}`)?.node
  }
}
