// The restricted controls of the Pod Security Standards (v1.29 policy library), each with its version history.

import type { Check } from './check.js'
import { forbiddenAdds } from './checks-baseline.js'
import {
  allContainers, annotations, containerName, isWindowsPod, list, named, obj, quoteAll, securityContext, setters, str, addUnique,
  type Obj, type PodView, type Violation
} from './pod-view.js'

const ALLOWED_VOLUME_TYPES = new Set(['configMap', 'csi', 'downwardAPI', 'emptyDir', 'ephemeral', 'persistentVolumeClaim',
  'projected', 'secret'])

/** The inline volume sources restricted forbids, by field name; any other source reads as "unknown". */
const KNOWN_RESTRICTED_TYPES = new Set(['hostPath', 'gcePersistentDisk', 'awsElasticBlockStore', 'gitRepo', 'nfs', 'iscsi',
  'glusterfs', 'rbd', 'flexVolume', 'cinder', 'cephfs', 'flocker', 'fc', 'azureFile', 'vsphereVolume', 'quobyte', 'azureDisk',
  'photonPersistentDisk', 'portworxVolume', 'scaleIO', 'storageos'])

function volumeType (v: Obj): string {
  const set = Object.keys(v).filter(k => k !== 'name' && v[k] !== undefined && v[k] !== null)
  return set.find(k => ALLOWED_VOLUME_TYPES.has(k)) ?? set.find(k => KNOWN_RESTRICTED_TYPES.has(k)) ?? 'unknown'
}

const restrictedVolumes: Check = {
  id: 'restrictedVolumes',
  level: 'restricted',
  minMinor: 0,
  overrides: ['hostPathVolumes'],
  overridesFromMinor: 0,
  check (p) {
    const vs: string[] = []
    const types: string[] = []
    for (const v of list(p.spec.volumes)) {
      const t = volumeType(v)
      if (ALLOWED_VOLUME_TYPES.has(t)) continue
      vs.push(str(v.name) ?? '')
      addUnique(types, t)
    }
    if (vs.length === 0) return undefined
    return {
      reason: 'restricted volume types',
      detail: `${named('volume', vs)} ${vs.length === 1 ? 'uses' : 'use'} restricted volume type${types.length === 1 ? '' : 's'} ${quoteAll(types.sort())}`
    }
  }
}

/** From v1.25 the Linux-only controls skip pods declaring `spec.os.name: windows`. */
const skipsWindows = (p: PodView, minor: number): boolean => minor >= 25 && isWindowsPod(p.spec)

const allowPrivilegeEscalation: Check = {
  id: 'allowPrivilegeEscalation',
  level: 'restricted',
  minMinor: 8,
  check (p, minor) {
    if (skipsWindows(p, minor)) return undefined
    const cs = allContainers(p.spec).filter(c => securityContext(c).allowPrivilegeEscalation !== false).map(containerName)
    if (cs.length === 0) return undefined
    return { reason: 'allowPrivilegeEscalation != false', detail: `${named('container', cs)} must set securityContext.allowPrivilegeEscalation=false` }
  }
}

const runAsNonRoot: Check = {
  id: 'runAsNonRoot',
  level: 'restricted',
  minMinor: 0,
  check (p) {
    const podValue = securityContext(p.spec).runAsNonRoot
    const explicit: string[] = []
    const implicit: string[] = []
    for (const c of allContainers(p.spec)) {
      const v = securityContext(c).runAsNonRoot
      if (v === false) explicit.push(containerName(c))
      else if (typeof v !== 'boolean' && podValue !== true) implicit.push(containerName(c))
    }
    const reason = 'runAsNonRoot != true'
    // Explicit false settings are reported alone; only without them are the containers that never opted in named.
    if (podValue === false || explicit.length > 0) {
      return { reason, detail: `${setters(podValue === false, explicit)} must not set securityContext.runAsNonRoot=false` }
    }
    if (implicit.length > 0) return { reason, detail: `pod or ${named('container', implicit)} must set securityContext.runAsNonRoot=true` }
    return undefined
  }
}

const runAsUser: Check = {
  id: 'runAsUser',
  level: 'restricted',
  minMinor: 23,
  check (p) {
    const pod = securityContext(p.spec).runAsUser === 0
    const cs = allContainers(p.spec).filter(c => securityContext(c).runAsUser === 0).map(containerName)
    if (!pod && cs.length === 0) return undefined
    return { reason: 'runAsUser=0', detail: `${setters(pod, cs)} must not set runAsUser=0` }
  }
}

const SECCOMP_OK = new Set(['RuntimeDefault', 'Localhost'])
const SECCOMP_POD_ANNOTATION = 'seccomp.security.alpha.kubernetes.io/pod'
const SECCOMP_CONTAINER_PREFIX = 'container.seccomp.security.alpha.kubernetes.io/'

/** Before v1.19 restricted required the seccomp annotations to name runtime/default, docker/default or localhost/*. */
function seccompRestrictedAnnotations (p: PodView): Violation | undefined {
  const a = annotations(p)
  const ok = (v: string | undefined): boolean => v === 'runtime/default' || v === 'docker/default' || (v ?? '').startsWith('localhost/')
  const pod = a[SECCOMP_POD_ANNOTATION]
  const bad: string[] = []
  if (pod !== undefined && !ok(pod)) bad.push(`${SECCOMP_POD_ANNOTATION}=${JSON.stringify(pod)}`)
  const unset: string[] = []
  for (const c of allContainers(p.spec)) {
    const v = a[SECCOMP_CONTAINER_PREFIX + containerName(c)]
    if (v !== undefined && !ok(v)) bad.push(`${SECCOMP_CONTAINER_PREFIX}${containerName(c)}=${JSON.stringify(v)}`)
    else if (v === undefined && pod === undefined) unset.push(containerName(c))
  }
  const parts: string[] = []
  if (bad.length > 0) parts.push(`forbidden annotation${bad.length === 1 ? '' : 's'} ${bad.join(', ')}`)
  if (unset.length > 0) parts.push(`pod or ${named('container', unset)} must set the seccomp annotation to "runtime/default" or "localhost/*"`)
  return parts.length === 0 ? undefined : { reason: 'seccompProfile', detail: parts.join('; ') }
}

const seccompRestricted: Check = {
  id: 'seccompProfile_restricted',
  level: 'restricted',
  minMinor: 0,
  overrides: ['seccompProfile_baseline'],
  overridesFromMinor: 0,
  check (p, minor) {
    if (minor < 19) return seccompRestrictedAnnotations(p)
    if (skipsWindows(p, minor)) return undefined
    const typeOf = (o: Obj): string | undefined => str(obj(securityContext(o).seccompProfile).type)
    const podType = typeOf(p.spec)
    const podBad = podType !== undefined && !SECCOMP_OK.has(podType)
    const values: string[] = podBad ? [podType] : []
    const explicit: string[] = []
    const implicit: string[] = []
    for (const c of allContainers(p.spec)) {
      const t = typeOf(c)
      if (t !== undefined && !SECCOMP_OK.has(t)) {
        explicit.push(containerName(c))
        addUnique(values, t)
      } else if (t === undefined && podType === undefined) implicit.push(containerName(c))
    }
    // As runAsNonRoot: forbidden values are reported alone, before containers that set nothing.
    if (podBad || explicit.length > 0) {
      return { reason: 'seccompProfile', detail: `${setters(podBad, explicit)} must not set securityContext.seccompProfile.type to ${quoteAll(values.sort())}` }
    }
    if (implicit.length > 0) {
      return { reason: 'seccompProfile', detail: `pod or ${named('container', implicit)} must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost"` }
    }
    return undefined
  }
}

const capabilitiesRestricted: Check = {
  id: 'capabilities_restricted',
  level: 'restricted',
  minMinor: 22,
  overrides: ['capabilities_baseline'],
  overridesFromMinor: 22,
  check (p, minor) {
    if (skipsWindows(p, minor)) return undefined
    const noDrop = allContainers(p.spec).filter(c => {
      const drop = obj(securityContext(c).capabilities).drop
      return !(Array.isArray(drop) && drop.includes('ALL'))
    }).map(containerName)
    const { containers, caps } = forbiddenAdds(p, cap => cap === 'NET_BIND_SERVICE')
    const parts: string[] = []
    if (noDrop.length > 0) parts.push(`${named('container', noDrop)} must set securityContext.capabilities.drop=["ALL"]`)
    if (containers.length > 0) parts.push(`${named('container', containers)} must not include ${quoteAll(caps)} in securityContext.capabilities.add`)
    return parts.length === 0 ? undefined : { reason: 'unrestricted capabilities', detail: parts.join('; ') }
  }
}

/** Sorted by id, the order the policy library reports them in (after the baseline checks). */
export const restrictedChecks: Check[] = [allowPrivilegeEscalation, capabilitiesRestricted, restrictedVolumes, runAsNonRoot,
  runAsUser, seccompRestricted]
