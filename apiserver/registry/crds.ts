// CustomResourceDefinitions: the CRD strategy and the controller that serves established CRDs, reports their
// conditions, and on deletion removes every custom object before it stops serving and releases the CRD.

import { StatusError } from '../errors/status-error.js'
import type { Store, WatchHandle } from '../storage/store.js'
import type { ResourceDefinition } from '../schema/types.js'
import { definitionsFromCRD, validateCRD } from '../schema/crd.js'
import type { Strategy } from './strategy.js'
import { crdRuleErrors, type CelRules, type CompiledRules } from './cel-rules.js'
import { metaOf, parseJson, rfc3339, type Obj } from './object-meta.js'
import { resourcePrefix } from './keys.js'
import { internalContext } from './internal-context.js'
import type { GenericStore } from './generic-store.js'
import type { Clock, Logger } from './core.js'

export const CRD_CLEANUP_FINALIZER = 'customresourcecleanup.apiextensions.orch.io'
const CRDS = { group: 'apiextensions.orch.io', plural: 'customresourcedefinitions', namespaced: false }

interface CrdSpec { versions?: Array<{ name: string, storage?: boolean }>, names?: Record<string, unknown> }

/** The CRD strategy: names, structure and (through `cel`) that every validation rule compiles within its cost limits. */
export function createCrdStrategy (cel: CelRules): Strategy {
  return {
  async prepareForCreate (obj) {
    await cel.prepare(obj.spec)
    const meta = metaOf(obj)
    const fins = meta.finalizers ?? []
    if (!fins.includes(CRD_CLEANUP_FINALIZER)) meta.finalizers = [...fins, CRD_CLEANUP_FINALIZER]
    const storage = ((obj.spec as CrdSpec | undefined)?.versions ?? []).find(v => v.storage === true)?.name
    obj.status = { storedVersions: storage !== undefined ? [storage] : [] }
  },
  async prepareForUpdate (obj) { await cel.prepare(obj.spec) },
  async validate (obj) {
    const errors = validateCRD(obj)
    return errors.length > 0 ? errors : await crdRuleErrors(obj, cel, definitionsFromCRD)
  }
  }
}

/** What the controller needs from the registry. */
export interface CrdServing {
  /** Serves the definitions of a CRD (replacing earlier ones); a message when its names conflict. */
  serve(crdName: string, defs: ResourceDefinition[]): Promise<string | undefined>
  unserve(crdName: string): void
  /** One handler per storage location of the CRD's objects (undefined when not served). */
  storageHandler(crdName: string): GenericStore | undefined
}

export interface CrdControllerOptions {
  store: Store
  crds: GenericStore
  serving: CrdServing
  clock: Clock
  logger: Logger
  retryMs?: number
}

function condition (type: string, status: string, reason: string, message: string, now: number): Obj {
  return { type, status, lastTransitionTime: rfc3339(now), reason, message }
}

export class CrdController {
  private readonly o: CrdControllerOptions
  private readonly ctx = internalContext('system:orch:crd-controller', 'orch-apiserver')
  private watch?: WatchHandle
  /** The CRDs the last list and the watch since have shown. */
  private known = new Set<string>()
  private readonly cleaning = new Set<string>()
  private readonly timers = new Set<NodeJS.Timeout>()
  /** CRDs being deleted: their kinds refuse new objects. */
  readonly terminating = new Set<string>()
  private stopped = false

  constructor (o: CrdControllerOptions) { this.o = o }

  async start (): Promise<void> {
    await this.listAndWatch()
  }

  /**
   * Lists the CRDs and serves each, stops serving those gone since the last list, then watches from the list's
   * revision. A failed watch (a slow watcher dropped, a compaction) starts over after a delay, as an informer relists.
   */
  private async listAndWatch (): Promise<void> {
    const prefix = resourcePrefix(CRDS)
    const listed = await this.o.store.list(prefix)
    if (this.stopped) return
    const seen = new Set<string>()
    for (const kv of listed.items) {
      const crd = parseJson(kv.value)
      seen.add(metaOf(crd).name ?? '')
      await this.reconcile(crd)
    }
    for (const name of this.known) if (!seen.has(name)) this.forget(name)
    this.known = seen
    this.watch = this.o.store.watch(prefix, listed.revision, {
      onEvents: evs => {
        for (const ev of evs) {
          const crd = parseJson(ev.value)
          const name = metaOf(crd).name ?? ''
          if (ev.type === 'delete') { this.known.delete(name); this.forget(name) } else { this.known.add(name); void this.reconcile(crd) }
        }
      },
      onError: err => {
        if (this.stopped) return
        this.o.logger.warn({ err }, 'CRD controller watch ended; listing again')
        this.relistLater()
      }
    })
  }

  private relistLater (): void {
    this.later(() => {
      this.listAndWatch().catch(err => {
        if (this.stopped) return
        this.o.logger.warn({ err }, 'CRD controller list failed; retrying')
        this.relistLater()
      })
    })
  }

  private forget (name: string): void {
    this.terminating.delete(name)
    this.o.serving.unserve(name)
  }

  stop (): void {
    this.stopped = true
    this.watch?.stop()
    for (const t of this.timers) clearTimeout(t)
  }

  private async reconcile (crd: Obj): Promise<void> {
    const name = metaOf(crd).name ?? ''
    try {
      const meta = metaOf(crd)
      // Released (cleanup finalizer gone): it is about to disappear; do not serve it again.
      if (meta.deletionTimestamp && !(meta.finalizers ?? []).includes(CRD_CLEANUP_FINALIZER)) return
      const conflictMsg = await this.o.serving.serve(name, definitionsFromCRD(crd))
      if (meta.deletionTimestamp) {
        this.terminating.add(name)
        await this.cleanup(name, crd)
        return
      }
      await this.writeStatus(name, crd, conflictMsg)
    } catch (err) {
      this.o.logger.warn({ err, crd: name }, 'CRD reconcile failed')
    }
  }

  private async writeStatus (name: string, crd: Obj, conflictMsg: string | undefined): Promise<void> {
    const now = this.o.clock.now()
    await this.o.crds.updateInternal(this.ctx, '', name, obj => {
      const status = (obj.status ??= {}) as { conditions?: Obj[], acceptedNames?: Obj }
      const spec = (crd.spec as CrdSpec | undefined)?.names ?? {}
      const kind = String(spec.kind ?? '')
      const names = { ...spec, singular: spec.singular ?? kind.toLowerCase(), listKind: spec.listKind ?? `${kind}List` }
      const wanted = conflictMsg === undefined
        ? [condition('NamesAccepted', 'True', 'NoConflicts', 'no conflicts found', now),
            condition('Established', 'True', 'InitialNamesAccepted', 'the initial names have been accepted', now)]
        : [condition('NamesAccepted', 'False', 'NameConflict', conflictMsg, now),
            condition('Established', 'False', 'NotAccepted', 'not all names are accepted', now)]
      const current = status.conditions ?? []
      const same = wanted.every(w => current.some(c => c.type === w.type && c.status === w.status && c.reason === w.reason))
      const sameNames = JSON.stringify(status.acceptedNames ?? {}) === JSON.stringify(names)
      if (same && (sameNames || conflictMsg !== undefined)) return false
      status.conditions = [...current.filter(c => !wanted.some(w => w.type === c.type)), ...wanted]
      if (conflictMsg === undefined) status.acceptedNames = names
      return true
    }, 'status')
  }

  /**
   * Deletes every custom object; once none is left, stops serving and drops the cleanup finalizer. Meanwhile
   * the CRD carries apiextensions' `Terminating` condition: True/InstanceDeletionInProgress while objects are
   * removed, InstanceDeletionFailed or InstanceDeletionCheck when a round fails or objects remain (finalizers),
   * False/InstanceDeletionCompleted once none is left (NeverEstablished for a CRD that was never served).
   */
  private async cleanup (name: string, crd: Obj): Promise<void> {
    if (this.cleaning.has(name) || this.stopped) return
    this.cleaning.add(name)
    let done = false
    try {
      const established = conditionOf(crd, 'Established')?.status === 'True'
      // Only the first round says InProgress: flipping back and forth would write on every watch event.
      if (conditionOf(crd, 'Terminating')?.status !== 'True') {
        await this.setTerminating(name, 'True', 'InstanceDeletionInProgress', 'CustomResource deletion is in progress')
      }
      let remaining = 0
      try {
        remaining = await this.deleteObjects(name)
      } catch (err) {
        await this.setTerminating(name, 'True', 'InstanceDeletionFailed', `could not issue all deletes: ${(err as Error).message}`)
        throw err
      }
      done = remaining === 0
      if (!done) {
        await this.setTerminating(name, 'True', 'InstanceDeletionCheck', `could not confirm zero CustomResources remaining: ${remaining} remaining`)
      } else {
        this.o.serving.unserve(name)
        if (established) await this.setTerminating(name, 'False', 'InstanceDeletionCompleted', 'removed all instances')
        else await this.setTerminating(name, 'False', 'NeverEstablished', 'resource was never established')
        await this.o.crds.updateInternal(this.ctx, '', name, obj => {
          const meta = metaOf(obj)
          const before = meta.finalizers ?? []
          meta.finalizers = before.filter(f => f !== CRD_CLEANUP_FINALIZER)
          return meta.finalizers.length !== before.length
        })
      }
    } catch (err) {
      this.o.logger.warn({ err, crd: name }, 'CRD cleanup failed; retrying')
    } finally {
      this.cleaning.delete(name)
    }
    if (!done && !this.stopped) {
      this.later(() => {
        this.o.crds.core.store.get(`${resourcePrefix(CRDS)}${name}`)
          .then(kv => { if (kv !== undefined) void this.reconcile(parseJson(kv.value)) })
          .catch(err => this.o.logger.warn({ err, crd: name }, 'CRD read failed'))
      })
    }
  }

  private later (fn: () => void): void {
    const t = setTimeout(() => { this.timers.delete(t); fn() }, this.o.retryMs ?? 500)
    this.timers.add(t)
  }

  /** Writes the Terminating condition when it differs (status subresource, so no generation change). */
  private async setTerminating (name: string, status: string, reason: string, message: string): Promise<void> {
    await this.o.crds.updateInternal(this.ctx, '', name, obj => {
      const cur = conditionOf(obj, 'Terminating')
      if (cur?.status === status && cur.reason === reason && cur.message === message) return false
      setCondition(obj, condition('Terminating', status, reason, message, this.o.clock.now()))
      return true
    }, 'status')
  }

  /** Issues deletes for every custom object; the number not yet gone. */
  private async deleteObjects (name: string): Promise<number> {
    const h = this.o.serving.storageHandler(name)
    if (h === undefined) return 0
    const listed = await h.list(this.ctx, '', {})
    let remaining = 0
    for (const bytes of listed.items) {
      const meta = metaOf(parseJson(bytes))
      remaining++
      if (meta.deletionTimestamp) continue
      try {
        if ((await h.delete(this.ctx, meta.namespace ?? '', meta.name ?? '', { propagationPolicy: 'Background' })).deleted) remaining--
      } catch (err) {
        if ((err as { code?: number }).code === 404) remaining--
        else throw err
      }
    }
    return remaining
  }
}

function conditionOf (crd: Obj, type: string): Obj | undefined {
  return ((crd.status as { conditions?: Obj[] } | undefined)?.conditions ?? []).find(c => c.type === type)
}

/** Replaces the condition of that type, keeping lastTransitionTime when the status did not change. */
function setCondition (crd: Obj, next: Obj): void {
  const status = (crd.status ??= {}) as { conditions?: Obj[] }
  const current = status.conditions ?? []
  const prev = current.find(c => c.type === next.type)
  if (prev !== undefined && prev.status === next.status) next.lastTransitionTime = prev.lastTransitionTime
  status.conditions = [...current.filter(c => c.type !== next.type), next]
}

/** The strategy of a custom kind: refuses creates while its CRD is being deleted; checks the CRD's rules. */
export function customResourceStrategy (crdName: string, terminating: Set<string>, rules?: CompiledRules): Strategy {
  return {
    validateTransition: rules === undefined ? undefined : (obj, old) => rules.evaluate(obj, old),
    admitCreate () {
      if (terminating.has(crdName)) {
        throw new StatusError(405, 'MethodNotAllowed', 'create not allowed while custom resource definition is terminating')
      }
    }
  }
}
