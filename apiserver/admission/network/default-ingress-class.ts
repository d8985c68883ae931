// The DefaultIngressClass admission plugin: a new Ingress naming no class (by field or by the deprecated annotation)
// gets the default IngressClass.

import type { WriteAttributes } from '../../registry/admission.js'
import type { AdmissionDeps, AdmissionPlugin } from '../plugins.js'
import { listObjects, type Obj } from '../lookup.js'
import { pickDefault } from '../default-class.js'

/** The annotations marking the default class: Kubernetes' and orch's spelling. */
export const DEFAULT_INGRESS_CLASS_ANNOTATIONS = ['ingressclass.kubernetes.io/is-default-class', 'ingressclass.orch.io/is-default-class'] as const

/** The deprecated annotation naming an Ingress's class; present, it means no default is wanted. */
const CLASS_ANNOTATION = 'kubernetes.io/ingress.class'

/** networking.orch.io and its Kubernetes name networking.k8s.io serve the same Ingresses. */
const GROUPS = new Set(['networking.orch.io', 'networking.k8s.io'])

const isIngressCreate = (a: WriteAttributes): boolean => a.operation === 'CREATE' && a.subresource === '' &&
  GROUPS.has(a.definition.group) && a.definition.plural === 'ingresses'

function hasClass (ing: Obj): boolean {
  const name = (ing.spec as Obj | undefined)?.ingressClassName
  if (name !== undefined && name !== null) return true
  return Object.hasOwn((ing.metadata?.annotations ?? {}) as Record<string, unknown>, CLASS_ANNOTATION)
}

export function defaultIngressClassPlugin (deps: AdmissionDeps): AdmissionPlugin {
  return {
    mutating: {
      async admit (a) {
        if (!isIngressCreate(a) || hasClass(a.object)) return
        const classes = await listObjects(deps.registry(), 'networking.orch.io', 'v1', 'ingressclasses', '')
        const def = pickDefault(classes, DEFAULT_INGRESS_CLASS_ANNOTATIONS)
        if (def === undefined) return
        a.object.spec = { ...(a.object.spec as Obj | undefined), ingressClassName: String(def.metadata.name) }
      }
    }
  }
}
