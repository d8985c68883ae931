// The AlwaysPullImages admission plugin: every container of a new pod (or one given new images) pulls Always, so a
// node's cached image cannot be used by someone not allowed to pull it.

import { forbidden } from '../../errors/status-error.js'
import type { WriteAttributes } from '../../registry/admission.js'
import type { AdmissionPlugin } from '../plugins.js'
import type { Obj } from '../lookup.js'

const KINDS = ['initContainers', 'containers', 'ephemeralContainers'] as const

function each (pod: Obj, f: (c: Obj, path: string) => void): void {
  for (const k of KINDS) ((pod.spec?.[k] ?? []) as Obj[]).forEach((c, i) => f(c, `spec.${k}[${i}]`))
}

/** An update that brings no image the old pod did not have is left alone (as v1.29 does). */
function bringsNewImages (a: WriteAttributes): boolean {
  if (a.operation === 'CREATE') return true
  const old = new Set<string>()
  each(a.oldObject ?? {}, c => old.add(String(c.image)))
  let fresh = false
  each(a.object, c => { if (!old.has(String(c.image))) fresh = true })
  return fresh
}

const applies = (a: WriteAttributes): boolean => a.definition.group === '' && a.definition.plural === 'pods' &&
  (a.subresource === '' || a.subresource === 'ephemeralcontainers') && a.operation !== 'DELETE' && bringsNewImages(a)

export function alwaysPullImagesPlugin (): AdmissionPlugin {
  return {
    mutating: {
      async admit (a) {
        if (applies(a)) each(a.object, c => { c.imagePullPolicy = 'Always' })
      }
    },
    validating: {
      async admit (a) {
        if (!applies(a)) return
        each(a.object, (c, path) => {
          if (c.imagePullPolicy !== 'Always') {
            throw forbidden({ group: '', resource: 'pods' }, a.name, `${path}.imagePullPolicy: Unsupported value: "${String(c.imagePullPolicy)}": supported values: "Always"`)
          }
        })
      }
    }
  }
}
