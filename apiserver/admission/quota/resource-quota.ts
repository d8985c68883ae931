// The ResourceQuota admission plugin: refuses a create that would exceed a quota of its namespace and charges the
// quota's status.used at once, one write at a time per namespace and by compare-and-swap on the quota's status.

import { forbidden, isStatusError } from '../../errors/status-error.js'
import type { WriteAdmission, WriteAttributes } from '../../registry/admission.js'
import type { AdmissionDeps, AdmissionPlugin } from '../plugins.js'
import { admissionContext, getObject, listObjects, type Obj } from '../lookup.js'
import { amount, formatAmount } from '../quantity.js'
import { charge, currentUsage, hasScopes, podInScopes, podMissing } from './usage.js'
import { inProcessClient } from '../../controllers/client/in-process.js'
import { QuotaLister } from './quota-lister.js'

const ATTEMPTS = 8

const pretty = (m: Map<string, string>): string => [...m.keys()].sort().map(k => `${k}=${m.get(k)!}`).join(',')

/** Serializes async work per key: each call starts when the previous one for the same key settled. */
class KeyedSerializer {
  private readonly tails = new Map<string, Promise<unknown>>()
  async run<T> (key: string, work: () => Promise<T>): Promise<T> {
    const prev = this.tails.get(key) ?? Promise.resolve()
    const next = prev.then(work, work)
    const tail = next.catch(() => undefined)
    this.tails.set(key, tail)
    try { return await next } finally { if (this.tails.get(key) === tail) this.tails.delete(key) }
  }
}

interface Charge { quota: Obj, used: Record<string, string> }

const QUOTAS = { group: '', version: 'v1', resource: 'resourcequotas', namespaced: true }

export function resourceQuotaPlugin (deps: AdmissionDeps, lister = defaultLister(deps)): AdmissionPlugin {
  const serial = new KeyedSerializer()

  /** The quotas this write charges and their new usage; throws 403 when one would be exceeded. */
  async function evaluate (a: WriteAttributes, quotas: Obj[], delta: (name: string) => number): Promise<Charge[]> {
    const qr = { group: a.definition.group, resource: a.definition.plural }
    const charges: Charge[] = []
    for (const quota of quotas) {
      const isPod = a.definition.group === '' && a.definition.plural === 'pods'
      if (hasScopes(quota) && !(isPod && podInScopes(quota, a.object))) continue
      const hard = (quota.spec?.hard ?? {}) as Record<string, string>
      const names = Object.keys(hard).filter(n => delta(n) !== 0)
      if (isPod && a.operation === 'CREATE') {
        const missing = Object.keys(hard).filter(n => /^(requests\.|limits\.)?(cpu|memory)$/.test(n)).flatMap(n => podMissing(a.object, n).length > 0 ? [n] : [])
        if (missing.length > 0) {
          const who = podMissing(a.object, missing[0]!)
          throw forbidden(qr, a.name, `failed quota: ${String(quota.metadata.name)}: must specify ${missing.sort().join(',')} for: ${who.join(',')}`)
        }
      }
      if (names.length === 0) continue
      const statusUsed = (quota.status?.used ?? {}) as Record<string, string>
      const used: Record<string, string> = { ...statusUsed }
      const exceeded = { requested: new Map<string, string>(), used: new Map<string, string>(), limited: new Map<string, string>() }
      for (const n of names) {
        const now = statusUsed[n] !== undefined ? amount(n, statusUsed[n]) : await currentUsage(deps.registry(), quota, a.namespace, n)
        const want = now + delta(n)
        const limit = amount(n, hard[n])
        if (delta(n) > 0 && want > limit) {
          exceeded.requested.set(n, formatAmount(n, delta(n)))
          exceeded.used.set(n, formatAmount(n, now))
          exceeded.limited.set(n, hard[n]!)
        }
        used[n] = formatAmount(n, Math.max(0, want))
      }
      if (exceeded.requested.size > 0) {
        throw forbidden(qr, a.name, `exceeded quota: ${String(quota.metadata.name)}, requested: ${pretty(exceeded.requested)}, used: ${pretty(exceeded.used)}, limited: ${pretty(exceeded.limited)}`)
      }
      charges.push({ quota, used })
    }
    return charges
  }

  /**
   * Writes each quota's new usage by compare-and-swap; a quota changed meanwhile (the controller recounted, a user
   * edited it) is read again and charged again alone, so quotas already charged are not charged twice.
   */
  async function commit (a: WriteAttributes, charges: Charge[], delta: (name: string) => number): Promise<void> {
    const h = deps.registry().handler('', 'v1', 'resourcequotas')
    if (h === undefined) return
    for (const first of charges) {
      let c: Charge | undefined = first
      for (let attempt = 1; c !== undefined; attempt++) {
        const body = { ...c.quota, status: { ...c.quota.status, hard: { ...c.quota.spec?.hard }, used: c.used } }
        try {
          // metadata.resourceVersion makes this a compare-and-swap on the stored quota.
          const written = await h.update(admissionContext, c.quota.metadata.namespace, c.quota.metadata.name, { object: body, duplicateFields: [] }, 'status')
          // The next write in this namespace charges from this version without waiting for the watch to bring it.
          lister.remember(written.object)
          break
        } catch (err) {
          // Deleted since it was read (memory may lag a delete): nothing left to charge.
          if (isStatusError(err) && err.code === 404) { lister.forget(a.namespace, String(c.quota.metadata.name)); break }
          if (!isStatusError(err) || err.code !== 409) throw err
          if (attempt >= ATTEMPTS) throw forbidden({ group: a.definition.group, resource: a.definition.plural }, a.name, `status unknown for quota: ${String(c.quota.metadata.name)}`)
        }
        const fresh = await getObject(deps.registry(), '', 'v1', 'resourcequotas', a.namespace, String(c.quota.metadata.name))
        c = fresh === undefined ? undefined : (await evaluate(a, [fresh], delta))[0]
      }
    }
  }

  const validating: WriteAdmission = {
    async admit (a) {
      if (a.namespace === '') return
      const { group, plural } = a.definition
      // A quota written here is enforced from this write on: memory does not answer for its namespace until it has seen it.
      if (group === '' && plural === 'resourcequotas' && a.subresource === '' && !a.ctx.dryRun) lister.fence(a.namespace, a.name)
      if (a.subresource !== '' || a.operation === 'DELETE') return
      const delta = (n: string): number => {
        const now = charge(group, plural, a.object, n)
        if (a.operation === 'CREATE') return now
        // Updates charge only what grew and is not an object count (a PVC's storage, a service turning NodePort).
        return n.startsWith('count/') || n === plural ? 0 : Math.max(0, now - charge(group, plural, a.oldObject ?? {}, n))
      }
      await serial.run(a.namespace, async () => {
        // From memory (QuotaLister: a namespace without quotas costs a map lookup), else from the watch cache on
        // etcd. Charges stay exact because each is a compare-and-swap on the quota, read again on conflict.
        const remembered = lister.quotas(a.namespace)
        const read = async (): Promise<Obj[]> => await listObjects(deps.registry(), '', 'v1', 'resourcequotas', a.namespace, { cached: true })
        const quotas = remembered ?? await read()
        if (quotas.length === 0) return
        // Every quota is checked before any is charged: a refused write charges none. A refusal from memory is
        // confirmed against a fresh read (memory may lag a recount that lowered the usage).
        let charges: Charge[]
        try {
          charges = await evaluate(a, quotas as Obj[], delta)
        } catch (err) {
          if (remembered === undefined || !isStatusError(err) || err.code !== 403) throw err
          charges = await evaluate(a, await read(), delta)
        }
        if (charges.length > 0 && !a.ctx.dryRun) await commit(a, charges, delta)
      })
    }
  }
  return { validating }
}

/** The lister over this server's own registry, as the API server itself. */
function defaultLister (deps: AdmissionDeps): QuotaLister {
  let client: ReturnType<typeof inProcessClient> | undefined
  return new QuotaLister(() => {
    client ??= inProcessClient(deps.registry(), 'resourcequota-admission', 'system:apiserver')
    return client.resource(QUOTAS)
  }, deps.now)
}
