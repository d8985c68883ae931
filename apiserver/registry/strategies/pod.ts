// Pod strategy: Pending status on create, imagePullPolicy by tag, graceful deletion, pod field selectors.

import type { Strategy } from '../strategy.js'
import { forbidden } from '../../errors/status-error.js'
import { fieldPathValue, type FieldGetter } from '../selectors.js'
import type { Obj } from '../object-meta.js'
import { validatePodSpec, validatePodUpdate } from './pod-validation.js'
import { admitServiceAccount, type ServiceAccountLookup } from './service-account-admission.js'

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
const NONE_OFF: ReadonlySet<string> = new Set()

/**
 * What kube-apiserver's default admission plugins add to every new pod: the `default` service account
 * (ServiceAccount), priority 0 (Priority), service links on, and 300 s tolerations of the not-ready and
 * unreachable taints (DefaultTolerationSeconds).
 */
function admitDefaults (spec: Obj | undefined, off: ReadonlySet<string> = NONE_OFF): void {
  if (spec === undefined) return
  if (spec.serviceAccountName === undefined || spec.serviceAccountName === '') spec.serviceAccountName = spec.serviceAccount ?? 'default'
  spec.serviceAccount ??= spec.serviceAccountName
  if (!off.has('Priority')) spec.priority ??= 0
  spec.enableServiceLinks ??= true
  if (off.has('DefaultTolerationSeconds')) return
  const tolerations = Array.isArray(spec.tolerations) ? spec.tolerations as Obj[] : []
  for (const key of ['node.kubernetes.io/not-ready', 'node.kubernetes.io/unreachable']) {
    const covered = tolerations.some(t => (t.key === key || (t.key === undefined && t.operator === 'Exists')) && (t.effect === undefined || t.effect === 'NoExecute'))
    if (!covered) tolerations.push({ key, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 })
  }
  spec.tolerations = tolerations
}

/** Reads PriorityClasses for the Priority admission step: by name, or the one marked globalDefault. */
export interface PriorityClassLookup {
  byName(name: string): Promise<Obj | undefined>
  globalDefault(): Promise<Obj | undefined>
}

/**
 * kube-apiserver's Priority admission: `priorityClassName` resolves to `priority` and `preemptionPolicy` (403 for
 * an unknown class); a pod naming none takes the globalDefault class, else priority 0.
 */
async function admitPriority (obj: Obj, classes: PriorityClassLookup): Promise<void> {
  const spec = obj.spec as Obj | undefined
  if (spec === undefined) return
  const name = typeof spec.priorityClassName === 'string' ? spec.priorityClassName : ''
  const pc = name !== '' ? await classes.byName(name) : await classes.globalDefault()
  if (name !== '' && pc === undefined) {
    throw forbidden({ group: '', resource: 'pods' }, String((obj.metadata as Obj | undefined)?.name ?? ''), `no PriorityClass with name ${name} was found`)
  }
  if (pc === undefined) { spec.priority ??= 0; return }
  if (spec.priority !== undefined && spec.priority !== pc.value) {
    throw forbidden({ group: '', resource: 'pods' }, String((obj.metadata as Obj | undefined)?.name ?? ''), 'the integer value of priority must not be provided in pod spec; priority admission controller computed ' + String(pc.value) + ' from the given PriorityClass name')
  }
  spec.priorityClassName = (pc.metadata as Obj).name
  spec.priority = pc.value
  spec.preemptionPolicy ??= pc.preemptionPolicy ?? 'PreemptLowerPriority'
}

const noPriorityClasses: PriorityClassLookup = { byName: async () => undefined, globalDefault: async () => undefined }

/** `off`: admission plugins disabled by name (Priority, DefaultTolerationSeconds); ServiceAccount is on with `serviceAccounts`. */
export function createPodStrategy (classes: PriorityClassLookup = noPriorityClasses, serviceAccounts?: ServiceAccountLookup,
  off: ReadonlySet<string> = NONE_OFF): Strategy {
  return {
    ...podStrategy,
    async prepareForCreate (obj, sc) {
      if (!off.has('Priority')) await admitPriority(obj, classes)
      defaultContainers(obj.spec as Obj | undefined)
      admitDefaults(obj.spec as Obj | undefined, off)
      obj.status = { phase: 'Pending' }
      if (serviceAccounts !== undefined) await admitServiceAccount(obj, String((obj.metadata as Obj | undefined)?.namespace ?? ''), { lookup: serviceAccounts })
    }
  }
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
