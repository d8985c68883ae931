// The DefaultStorageClass admission plugin: a new PersistentVolumeClaim naming no class gets the default StorageClass.

import type { WriteAttributes } from '../../registry/admission.js'
import type { AdmissionDeps, AdmissionPlugin } from '../plugins.js'
import { listObjects, type Obj } from '../lookup.js'
import { pickDefault } from '../default-class.js'

/** The annotations marking the default class: Kubernetes' GA and beta keys, and orch's spelling. */
export const DEFAULT_STORAGE_CLASS_ANNOTATIONS = [
  'storageclass.kubernetes.io/is-default-class', 'storageclass.beta.kubernetes.io/is-default-class', 'storageclass.orch.io/is-default-class'
] as const

/** The deprecated annotation naming a claim's class; it wins over spec.storageClassName. */
export const BETA_STORAGE_CLASS_ANNOTATION = 'volume.beta.kubernetes.io/storage-class'

const isPvcCreate = (a: WriteAttributes): boolean => a.operation === 'CREATE' && a.subresource === '' &&
  a.definition.group === '' && a.definition.plural === 'persistentvolumeclaims'

/** Whether the claim names a class at all: the beta annotation present, or spec.storageClassName set (even to ""). */
function hasClass (pvc: Obj): boolean {
  const annotations = (pvc.metadata?.annotations ?? {}) as Record<string, unknown>
  if (Object.hasOwn(annotations, BETA_STORAGE_CLASS_ANNOTATION)) return true
  const name = (pvc.spec as Obj | undefined)?.storageClassName
  return name !== undefined && name !== null
}

/** The default StorageClass, or undefined when none is annotated as default. */
export async function defaultStorageClass (deps: AdmissionDeps): Promise<Obj | undefined> {
  const classes = await listObjects(deps.registry(), 'storage.orch.io', 'v1', 'storageclasses', '')
  return pickDefault(classes, DEFAULT_STORAGE_CLASS_ANNOTATIONS)
}

export function defaultStorageClassPlugin (deps: AdmissionDeps): AdmissionPlugin {
  return {
    mutating: {
      async admit (a) {
        if (!isPvcCreate(a) || hasClass(a.object)) return
        const def = await defaultStorageClass(deps)
        if (def === undefined) return
        a.object.spec = { ...(a.object.spec as Obj | undefined), storageClassName: String(def.metadata.name) }
      }
    }
  }
}
