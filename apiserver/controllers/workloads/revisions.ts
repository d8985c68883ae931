// ControllerRevisions of DaemonSets and StatefulSets: one per template, numbered, labelled with the hash pods carry.

import type { ControllerContext } from '../controller.js'
import { RESOURCES, type Obj } from '../client/types.js'
import { controllerOf } from '../labels.js'
import { controllerRef } from '../pods.js'
import { equalIgnoringHash, templateHash } from './deployment-util.js'

export const REVISION_HASH_LABEL = 'controller-revision-hash'

export interface Revisions {
  /** The revision of the current template (created when missing, its number raised when it comes back). */
  update: Obj
  /** Every owned revision, oldest number first. */
  all: Obj[]
}

const numberOf = (r: Obj): number => Number(r.revision ?? 0)

/** Finds or makes the revision of `owner`'s template among `candidates` (the ControllerRevisions of its namespace). */
export async function syncRevisions (c: ControllerContext, owner: Obj, kind: string, candidates: Obj[]): Promise<Revisions> {
  const client = c.client.resource(RESOURCES.controllerRevisions)
  const ns = String(owner.metadata.namespace)
  const owned = candidates.filter(r => controllerOf(r)?.uid === owner.metadata.uid).sort((a, b) => numberOf(a) - numberOf(b))
  const template = owner.spec.template
  const max = Math.max(0, ...owned.map(numberOf))
  const match = owned.find(r => equalIgnoringHash(templateOf(r), template))
  if (match !== undefined) {
    if (numberOf(match) === max) return { update: match, all: owned }
    const raised = await client.update(ns, { ...match, revision: max + 1 })
    return { update: raised, all: owned.map(r => (r === match ? raised : r)) }
  }
  const hash = templateHash(template, owner.status?.collisionCount ?? undefined)
  const rev = {
    apiVersion: 'apps/v1',
    kind: 'ControllerRevision',
    metadata: {
      name: `${String(owner.metadata.name)}-${hash}`,
      namespace: ns,
      labels: { ...(template.metadata?.labels ?? {}), [REVISION_HASH_LABEL]: hash },
      ownerReferences: [controllerRef({ apiVersion: 'apps/v1', kind, name: owner.metadata.name, uid: owner.metadata.uid })]
    },
    data: { spec: { template: { ...structuredClone(template), $patch: 'replace' } } },
    revision: max + 1
  }
  try {
    const made = await client.create(ns, rev)
    return { update: made, all: [...owned, made] }
  } catch (err) {
    if ((err as { code?: number }).code !== 409) throw err
    const existing = await client.get(ns, rev.metadata.name)
    if (existing !== undefined && controllerOf(existing)?.uid === owner.metadata.uid) return { update: existing, all: [...owned, existing] }
    throw err
  }
}

/** The pod template a revision records (its data is a strategic merge patch that replaces the template). */
export function templateOf (rev: Obj): Obj {
  const { $patch: _patch, ...template } = (rev.data?.spec?.template ?? {}) as Obj
  return template
}

export function hashOf (rev: Obj): string {
  return String(rev.metadata?.labels?.[REVISION_HASH_LABEL] ?? '')
}

/** Deletes the oldest revisions no pod uses beyond `revisionHistoryLimit` (default 10). */
export async function truncateHistory (c: ControllerContext, owner: Obj, revs: Revisions, live: Set<string>): Promise<void> {
  const limit = owner.spec?.revisionHistoryLimit ?? 10
  const idle = revs.all.filter(r => r.metadata.name !== revs.update.metadata.name && !live.has(hashOf(r)))
  for (const r of idle.slice(0, Math.max(0, idle.length - limit))) {
    try { await c.client.resource(RESOURCES.controllerRevisions).delete(String(r.metadata.namespace), String(r.metadata.name)) } catch (err) {
      if ((err as { code?: number }).code !== 404) throw err
    }
  }
}
