// pods/{name}/eviction: deletes a pod unless that would break its PodDisruptionBudget, as kube-apiserver's EvictionREST.

import { StatusError, notFound } from '../../errors/status-error.js'
import type { GenericStore } from '../generic-store.js'
import { labelSelectorMatches } from '../label-selector.js'
import type { Obj } from '../object-meta.js'
import type { DecodedObject, DeleteOptions, RequestContext, SubresourceCreater, SubresourceResult } from '../types.js'
import { successStatus } from './binding.js'
import { rfc3339 } from '../object-meta.js'


function tooManyRequests (message: string, cause: string): StatusError {
  return new StatusError(429, 'TooManyRequests', message, { causes: [{ reason: 'DisruptionBudget', message: cause }] })
}

/** A pod that is not running (finished, pending, or already going) may always be evicted. */
function canIgnoreBudget (pod: Obj): boolean {
  const phase = (pod.status as Obj | undefined)?.phase
  return phase === 'Succeeded' || phase === 'Failed' || phase === 'Pending' || (pod.metadata as Obj).deletionTimestamp !== undefined
}

export function createEvictionSubresource (pods: GenericStore, budgets: GenericStore, now: () => number): SubresourceCreater {
  return {
    requestKind: { apiVersions: ['policy/v1', 'policy/v1beta1'], kind: 'Eviction' },
    async create (ctx: RequestContext, namespace: string, name: string, body: DecodedObject): Promise<SubresourceResult> {
      const got = await pods.get(ctx, namespace, name, {})
      const pod = Buffer.isBuffer(got) ? JSON.parse(got.toString('utf8')) as Obj : got.object
      const deleteOptions = (body.object.deleteOptions ?? {}) as DeleteOptions
      if (!canIgnoreBudget(pod)) {
        const listed = await budgets.list(ctx, namespace, {})
        const labels = ((pod.metadata as Obj).labels ?? {}) as Record<string, string>
        const matching = listed.items.map(b => JSON.parse(b.toString('utf8')) as Obj)
          .filter(b => labelSelectorMatches((b.spec as Obj | undefined)?.selector as never, labels))
        if (matching.length > 1) {
          throw new StatusError(500, 'InternalError', 'This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.')
        }
        if (matching.length === 1 && !ctx.dryRun) await spendDisruption(ctx, budgets, matching[0], name, now)
      }
      try {
        await pods.delete(ctx, namespace, name, deleteOptions)
      } catch (err) {
        if ((err as { code?: number }).code === 404) throw notFound({ group: '', resource: 'pods' }, name)
        throw err
      }
      return { status: 201, object: successStatus(201) }
    }
  }
}

/** Takes one disruption from the budget's status (refused with 429 when none is left), recording the pod. */
async function spendDisruption (ctx: RequestContext, budgets: GenericStore, pdb: Obj, podName: string, now: () => number): Promise<void> {
  const meta = pdb.metadata as Obj
  let refusal: StatusError | undefined
  // updateInternal re-reads and re-runs this on a conflict, so the count checked is always the stored one.
  await budgets.updateInternal(ctx, String(meta.namespace), String(meta.name), current => {
    refusal = undefined
    const status = (current.status ?? {}) as Obj
    const gen = Number((current.metadata as Obj).generation ?? 0)
    if (Number(status.observedGeneration ?? 0) < gen) {
      refusal = tooManyRequests('Cannot evict pod as it would violate the pod\'s disruption budget.',
        `The disruption budget ${String(meta.name)} is still being processed by the server.`)
      return false
    }
    const allowed = Number(status.disruptionsAllowed ?? 0)
    if (allowed <= 0) {
      refusal = tooManyRequests('Cannot evict pod as it would violate the pod\'s disruption budget.',
        `The disruption budget ${String(meta.name)} needs ${String(status.desiredHealthy ?? 0)} healthy pods and has ${String(status.currentHealthy ?? 0)} currently`)
      return false
    }
    status.disruptionsAllowed = allowed - 1
    status.disruptedPods = { ...((status.disruptedPods ?? {}) as Obj), [podName]: rfc3339(now()) }
    current.status = status
    return true
  }, 'status')
  if (refusal !== undefined) throw refusal
}
