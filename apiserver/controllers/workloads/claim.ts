// Adoption and release by selector: which pods a controller owns, as Kubernetes' ControllerRefManager decides.

import { RESOURCES, type ApiClient, type Obj, type Resource } from '../client/types.js'
import { controllerRef } from '../pods.js'

/**
 * The pods `owner` controls after claiming: its own that still match, orphans that match (adopted, unless the
 * owner is being deleted), minus its own that no longer match (released). Objects of other owners are left alone.
 */
export async function claimPods (client: ApiClient, owner: Obj, kind: string, candidates: Obj[],
  matches: (labels: Record<string, string>) => boolean): Promise<Obj[]> {
  return await claimObjects(client, RESOURCES.pods, owner, kind, candidates, matches)
}

/** claimPods for any dependent resource (a Deployment claims ReplicaSets). */
export async function claimObjects (client: ApiClient, resource: Resource, owner: Obj, kind: string, candidates: Obj[],
  matches: (labels: Record<string, string>) => boolean): Promise<Obj[]> {
  const uid = owner.metadata?.uid
  const pods = client.resource(resource)
  const namespace = String(owner.metadata?.namespace ?? '')
  const mine: Obj[] = []
  for (const p of candidates) {
    const refs = (p.metadata?.ownerReferences ?? []) as Obj[]
    const ctrl = refs.find(r => r.controller === true)
    const labels = (p.metadata?.labels ?? {}) as Record<string, string>
    if (ctrl !== undefined) {
      if (ctrl.uid !== uid) continue
      if (matches(labels)) { mine.push(p); continue }
      if ((p.metadata?.deletionTimestamp ?? null) !== null) continue
      await patchOwners(pods, namespace, p, refs.filter(r => r.uid !== uid))
      continue
    }
    if (!matches(labels) || (p.metadata?.deletionTimestamp ?? null) !== null || (owner.metadata?.deletionTimestamp ?? null) !== null) continue
    const ref = controllerRef({ apiVersion: owner.apiVersion ?? apiVersionOf(kind), kind, name: owner.metadata.name, uid })
    const adopted = await patchOwners(pods, namespace, p, [...refs, ref])
    if (adopted !== undefined) mine.push(adopted)
  }
  return mine
}

function apiVersionOf (kind: string): string {
  return kind === 'ReplicationController' ? 'v1' : kind === 'Job' ? 'batch/v1' : 'apps/v1'
}

async function patchOwners (pods: ReturnType<ApiClient['resource']>, namespace: string, pod: Obj, refs: Obj[]): Promise<Obj | undefined> {
  try {
    return await pods.patch(namespace, String(pod.metadata.name), {
      metadata: { ownerReferences: refs.length > 0 ? refs : null, uid: pod.metadata.uid }
    })
  } catch (err) {
    const code = (err as { code?: number }).code
    if (code === 404 || code === 409 || code === 422) return undefined
    throw err
  }
}
