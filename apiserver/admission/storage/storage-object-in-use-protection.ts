// The StorageObjectInUseProtection admission plugin: new PersistentVolumeClaims and PersistentVolumes carry the
// protection finalizer, so deleting one in use waits until nothing uses it.

import type { AdmissionPlugin } from '../plugins.js'
import type { Obj } from '../lookup.js'

const FINALIZERS: Record<string, string> = {
  persistentvolumeclaims: 'kubernetes.io/pvc-protection',
  persistentvolumes: 'kubernetes.io/pv-protection'
}

export function storageObjectInUseProtectionPlugin (): AdmissionPlugin {
  return {
    mutating: {
      async admit (a) {
        const finalizer = FINALIZERS[a.definition.plural]
        if (a.operation !== 'CREATE' || a.subresource !== '' || a.definition.group !== '' || finalizer === undefined) return
        const meta = a.object.metadata as Obj
        const have = (meta.finalizers ?? []) as string[]
        if (!have.includes(finalizer)) meta.finalizers = [...have, finalizer]
      }
    }
  }
}
