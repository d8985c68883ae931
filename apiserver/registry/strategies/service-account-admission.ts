// kube-apiserver's ServiceAccount admission for new pods: the account must exist, and its token is mounted as a projected volume.

import { randomBytes } from 'node:crypto'
import { forbidden } from '../../errors/status-error.js'
import { isMirrorPod } from '../mirror-pods.js'

type Obj = Record<string, unknown>

/** Where in-cluster clients (client-go, the Python and JavaScript clients) look for the token, CA and namespace. */
export const TOKEN_MOUNT_PATH = '/var/run/secrets/kubernetes.io/serviceaccount'
/** Kubernetes' default token lifetime in the volume: 3607 s, so the token is refreshed before an hour is up. */
const TOKEN_EXPIRATION_SECONDS = 3607

/** Reads ServiceAccounts (undefined: not found). */
export type ServiceAccountLookup = (namespace: string, name: string) => Promise<Obj | undefined>

export interface ServiceAccountAdmissionOptions {
  lookup: ServiceAccountLookup
  /** Attempts to find an account the serviceaccounts controller may still be making (a namespace's `default`). */
  attempts?: number
  retryMs?: number
}

const LOWER_ALNUM = 'bcdfghjklmnpqrstvwxz2456789'

/** Five characters as Kubernetes' name generator picks them (no vowels, no look-alikes). */
function suffix (): string {
  return [...randomBytes(5)].map(b => LOWER_ALNUM[b % LOWER_ALNUM.length]).join('')
}

function tokenVolume (name: string): Obj {
  return {
    name,
    projected: {
      defaultMode: 0o644,
      sources: [
        { serviceAccountToken: { expirationSeconds: TOKEN_EXPIRATION_SECONDS, path: 'token' } },
        { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
        { downwardAPI: { items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }] } }
      ]
    }
  }
}

const containersOf = (spec: Obj): Obj[] =>
  ['initContainers', 'containers', 'ephemeralContainers'].flatMap(k => Array.isArray(spec[k]) ? spec[k] as Obj[] : [])

async function findAccount (o: ServiceAccountAdmissionOptions, namespace: string, name: string): Promise<Obj | undefined> {
  const attempts = o.attempts ?? 10
  for (let i = 0; i < attempts; i++) {
    const sa = await o.lookup(namespace, name)
    if (sa !== undefined) return sa
    if (i + 1 < attempts) await new Promise(resolve => setTimeout(resolve, o.retryMs ?? 200))
  }
  return undefined
}

/**
 * Mirror pods (static pods of an orchlet) are left alone. Otherwise the pod's account must exist (403 as Kubernetes
 * words it), and unless the pod or the account turns automounting off, every container gets the token volume.
 */
export async function admitServiceAccount (pod: Obj, namespace: string, o: ServiceAccountAdmissionOptions): Promise<void> {
  const spec = pod.spec as Obj | undefined
  const meta = (pod.metadata ?? {}) as Obj
  if (spec === undefined || isMirrorPod(pod)) return
  const name = String(spec.serviceAccountName ?? 'default')
  const sa = await findAccount(o, namespace, name)
  if (sa === undefined) {
    throw forbidden({ group: '', resource: 'pods' }, String(meta.name ?? ''), `error looking up service account ${namespace}/${name}: serviceaccount "${name}" not found`)
  }
  const automount = (spec.automountServiceAccountToken ?? sa.automountServiceAccountToken ?? true) === true
  if (!automount) return
  const containers = containersOf(spec)
  const mounted = (c: Obj): boolean => Array.isArray(c.volumeMounts) && (c.volumeMounts as Obj[]).some(m => m.mountPath === TOKEN_MOUNT_PATH)
  if (containers.length === 0 || containers.some(mounted)) return
  const volumes = Array.isArray(spec.volumes) ? spec.volumes as Obj[] : []
  const volumeName = `kube-api-access-${suffix()}`
  volumes.push(tokenVolume(volumeName))
  spec.volumes = volumes
  for (const c of containers) {
    const mounts = Array.isArray(c.volumeMounts) ? c.volumeMounts as Obj[] : []
    mounts.push({ name: volumeName, readOnly: true, mountPath: TOKEN_MOUNT_PATH })
    c.volumeMounts = mounts
  }
}
