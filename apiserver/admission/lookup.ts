// Reads of the registry that admission plugins make, as the API server itself (no authorization, no admission).

import type { Registry } from '../registry/types.js'
import { internalContext } from '../registry/internal-context.js'

export type Obj = Record<string, any> // eslint-disable-line @typescript-eslint/no-explicit-any

const system = internalContext('system:apiserver', 'kube-apiserver')

/** One object, or undefined when it (or its resource) does not exist. */
export async function getObject (registry: Registry, group: string, version: string, plural: string, namespace: string, name: string): Promise<Obj | undefined> {
  const h = registry.handler(group, version, plural)
  if (h === undefined) return undefined
  try {
    const got = await h.get(system, namespace, name, {})
    return Buffer.isBuffer(got) ? JSON.parse(got.toString('utf8')) : got.object
  } catch { return undefined }
}

/**
 * Every object of a resource in `namespace` ('' for all or cluster scope); [] when the resource is not served.
 * `cached`: any recent snapshot will do (resourceVersion "0"), so a watch cache in front of etcd answers from memory,
 * as kube-apiserver's admission plugins read their informers' listers; otherwise a consistent read.
 */
export async function listObjects (registry: Registry, group: string, version: string, plural: string, namespace: string, opts: { cached?: boolean } = {}): Promise<Obj[]> {
  const h = registry.handler(group, version, plural)
  if (h === undefined) return []
  return (await h.list(system, namespace, opts.cached === true ? { resourceVersion: '0' } : {})).items.map(b => JSON.parse(b.toString('utf8')) as Obj)
}

export { system as admissionContext }
