// The PersistentVolumeClaimResize admission plugin: a claim may grow only when bound and when its StorageClass (the
// same before and after) allows volume expansion.

import { forbidden } from '../../errors/status-error.js'
import type { WriteAttributes } from '../../registry/admission.js'
import type { AdmissionDeps, AdmissionPlugin } from '../plugins.js'
import { getObject, type Obj } from '../lookup.js'
import { quantity } from '../../scheduler/resources.js'
import { BETA_STORAGE_CLASS_ANNOTATION } from './default-storage-class.js'

const isPvcUpdate = (a: WriteAttributes): boolean => a.operation === 'UPDATE' && a.subresource === '' &&
  a.definition.group === '' && a.definition.plural === 'persistentvolumeclaims' && a.oldObject !== undefined

const requested = (pvc: Obj): number => {
  const v = (pvc.spec as Obj | undefined)?.resources?.requests?.storage
  return v === undefined ? 0 : quantity(v)
}

/** The claim's class as Kubernetes reads it: the beta annotation first, then spec.storageClassName; '' for none. */
function classOf (pvc: Obj): string {
  const annotations = (pvc.metadata?.annotations ?? {}) as Record<string, unknown>
  const beta = annotations[BETA_STORAGE_CLASS_ANNOTATION]
  if (typeof beta === 'string') return beta
  const name = (pvc.spec as Obj | undefined)?.storageClassName
  return typeof name === 'string' ? name : ''
}

async function allowsResize (deps: AdmissionDeps, pvc: Obj, old: Obj): Promise<boolean> {
  const cls = classOf(pvc)
  if (cls === '' || cls !== classOf(old)) return false
  const sc = await getObject(deps.registry(), 'storage.orch.io', 'v1', 'storageclasses', '', cls)
  return sc?.allowVolumeExpansion === true
}

export function persistentVolumeClaimResizePlugin (deps: AdmissionDeps): AdmissionPlugin {
  return {
    validating: {
      async admit (a) {
        if (!isPvcUpdate(a)) return
        const old = a.oldObject!
        if (requested(a.object) <= requested(old)) return
        const refuse = (why: string): Error => forbidden({ group: '', resource: 'persistentvolumeclaims' }, a.name, why)
        if ((old.status as Obj | undefined)?.phase !== 'Bound') throw refuse('Only bound persistent volume claims can be expanded')
        if (!await allowsResize(deps, a.object, old)) {
          throw refuse('only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize')
        }
      }
    }
  }
}
