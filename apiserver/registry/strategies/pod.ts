// Pod strategy: Pending status on create, imagePullPolicy by tag, graceful deletion, pod field selectors.

import type { Strategy } from '../strategy.js'
import { fieldPathValue, type FieldGetter } from '../selectors.js'
import type { Obj } from '../object-meta.js'
import { validatePodSpec, validatePodUpdate } from './pod-validation.js'

const field = (path: string): FieldGetter => o => fieldPathValue(o, path)

export const podFieldLabels: Record<string, FieldGetter> = {
  'spec.nodeName': field('spec.nodeName'),
  'spec.restartPolicy': field('spec.restartPolicy'),
  'spec.schedulerName': field('spec.schedulerName'),
  'spec.serviceAccountName': field('spec.serviceAccountName'),
  'spec.hostNetwork': o => fieldPathValue(o, 'spec.hostNetwork') === 'true' ? 'true' : 'false',
  'status.phase': field('status.phase'),
  'status.podIP': field('status.podIP'),
  'status.nominatedNodeName': field('status.nominatedNodeName')
}

/** Always for `:latest` or an untagged image, IfNotPresent otherwise (Kubernetes' defaulting). */
export function defaultPullPolicy (image: string): string {
  if (image.includes('@')) return 'IfNotPresent'
  const last = image.slice(image.lastIndexOf('/') + 1)
  const colon = last.lastIndexOf(':')
  if (colon < 0) return 'Always'
  return last.slice(colon + 1) === 'latest' ? 'Always' : 'IfNotPresent'
}

function defaultContainers (spec: Obj | undefined): void {
  for (const list of ['initContainers', 'containers', 'ephemeralContainers']) {
    const cs = spec?.[list]
    if (!Array.isArray(cs)) continue
    for (const c of cs as Obj[]) {
      if (c !== null && typeof c === 'object' && c.imagePullPolicy === undefined && typeof c.image === 'string') {
        c.imagePullPolicy = defaultPullPolicy(c.image)
      }
    }
  }
}

const DEFAULT_GRACE_SECONDS = 30

/**
 * What kube-apiserver's default admission plugins add to every new pod: the `default` service account
 * (ServiceAccount), priority 0 (Priority), service links on, and 300 s tolerations of the not-ready and
 * unreachable taints (DefaultTolerationSeconds).
 */
function admitDefaults (spec: Obj | undefined): void {
  if (spec === undefined) return
  if (spec.serviceAccountName === undefined || spec.serviceAccountName === '') spec.serviceAccountName = spec.serviceAccount ?? 'default'
  spec.serviceAccount ??= spec.serviceAccountName
  spec.priority ??= 0
  spec.enableServiceLinks ??= true
  const tolerations = Array.isArray(spec.tolerations) ? spec.tolerations as Obj[] : []
  for (const key of ['node.orch.io/not-ready', 'node.orch.io/unreachable']) {
    const covered = tolerations.some(t => (t.key === key || (t.key === undefined && t.operator === 'Exists')) && (t.effect === undefined || t.effect === 'NoExecute'))
    if (!covered) tolerations.push({ key, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 })
  }
  spec.tolerations = tolerations
}

export const podStrategy: Strategy = {
  fieldLabels: podFieldLabels,
  prepareForCreate (obj) {
    defaultContainers(obj.spec as Obj | undefined)
    admitDefaults(obj.spec as Obj | undefined)
    obj.status = { phase: 'Pending' }
  },
  prepareForUpdate (obj) {
    defaultContainers(obj.spec as Obj | undefined)
  },
  validate: validatePodSpec,
  validateUpdate: validatePodUpdate,
  gracePeriodSeconds (obj, opts) {
    const spec = (obj.spec ?? {}) as { nodeName?: string, terminationGracePeriodSeconds?: number }
    const phase = (obj.status as { phase?: string } | undefined)?.phase
    // Never scheduled, or already finished: nothing on a node to wait for.
    if (spec.nodeName === undefined || spec.nodeName === '' || phase === 'Succeeded' || phase === 'Failed') return 0
    const grace = opts.gracePeriodSeconds ?? spec.terminationGracePeriodSeconds ?? DEFAULT_GRACE_SECONDS
    return Math.max(0, grace)
  }
}
