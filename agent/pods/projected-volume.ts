// The files of projected and downwardAPI volumes: service-account tokens (TokenRequest), configMap, secret and downward API items.

import type { ApiClient, JsonObject } from '../../apiserver/client/rest-client.js'
import { isNotFound } from '../../apiserver/client/rest-client.js'
import { parseQuantity } from '../config/quantity.js'
import type { Pod } from './pod-types.js'

interface KeyItem { key: string; path: string; mode?: number }
type DownwardItem = { path: string; fieldRef?: { fieldPath: string }; resourceFieldRef?: { containerName?: string; resource: string; divisor?: string }; mode?: number }

export interface ProjectedSource {
  serviceAccountToken?: { audience?: string; expirationSeconds?: number; path: string }
  configMap?: { name: string; items?: KeyItem[]; optional?: boolean }
  secret?: { name: string; items?: KeyItem[]; optional?: boolean }
  downwardAPI?: { items?: DownwardItem[] }
}

/** One file of a volume: its path inside the volume, content and mode (undefined: the volume's defaultMode). */
export interface VolumeFile { path: string; data: Buffer; mode?: number }

export interface ProjectedFiles {
  files: VolumeFile[]
  /** When the token in it should be fetched again (ms since the epoch); undefined without a token. */
  refreshAtMs?: number
}

/** A volume whose source is missing or wrong; the message is shown in the FailedMount event. */
export class ProjectionError extends Error {
  override readonly name = 'ProjectionError'
}

const DEFAULT_TOKEN_SECONDS = 3600

/** A key/value map as the kubelet writes metadata.labels and metadata.annotations: `key="value"` lines, sorted. */
function formatMap (m: Record<string, string> | undefined): string {
  return Object.keys(m ?? {}).sort().map(k => `${k}=${JSON.stringify(m![k])}`).join('\n')
}

function downwardField (pod: Pod, path: string): string {
  const label = /^metadata\.labels\['(.+)'\]$/.exec(path)
  if (label !== null) return pod.metadata.labels?.[label[1]] ?? ''
  const ann = /^metadata\.annotations\['(.+)'\]$/.exec(path)
  if (ann !== null) return pod.metadata.annotations?.[ann[1]] ?? ''
  switch (path) {
    case 'metadata.name': return pod.metadata.name
    case 'metadata.namespace': return pod.metadata.namespace
    case 'metadata.uid': return pod.metadata.uid
    case 'metadata.labels': return formatMap(pod.metadata.labels)
    case 'metadata.annotations': return formatMap(pod.metadata.annotations)
    default: throw new ProjectionError(`unsupported fieldRef fieldPath "${path}" in a downward API volume`)
  }
}

function downwardResource (pod: Pod, ref: NonNullable<DownwardItem['resourceFieldRef']>): string {
  const container = pod.spec.containers.find(c => c.name === ref.containerName) ?? (ref.containerName === undefined ? pod.spec.containers[0] : undefined)
  if (container === undefined) throw new ProjectionError(`container "${ref.containerName ?? ''}" of resourceFieldRef not found`)
  const [kind, resource] = ref.resource.split('.') as ['limits' | 'requests', string]
  const divisor = ref.divisor === undefined ? 1 : parseQuantity(ref.divisor)
  const q = container.resources?.[kind]?.[resource]
  return String(q === undefined ? 0 : Math.ceil(parseQuantity(q) / divisor))
}

export function downwardFiles (pod: Pod, items: DownwardItem[]): VolumeFile[] {
  return items.map(i => ({
    path: i.path,
    mode: i.mode,
    data: Buffer.from(i.fieldRef !== undefined ? downwardField(pod, i.fieldRef.fieldPath) : i.resourceFieldRef !== undefined ? downwardResource(pod, i.resourceFieldRef) : '')
  }))
}

async function objectData (client: ApiClient, kind: 'configmaps' | 'secrets', namespace: string, name: string, optional: boolean): Promise<Map<string, Buffer> | undefined> {
  let obj: JsonObject
  try {
    obj = await client.get(`/api/v1/namespaces/${namespace}/${kind}/${name}`)
  } catch (err) {
    if (isNotFound(err) && optional) return undefined
    if (isNotFound(err)) throw new ProjectionError(`${kind === 'configmaps' ? 'configmap' : 'secret'} "${name}" not found`)
    throw err
  }
  const out = new Map<string, Buffer>()
  for (const [k, v] of Object.entries((obj.data ?? {}) as Record<string, string>)) out.set(k, Buffer.from(v, kind === 'secrets' ? 'base64' : 'utf8'))
  for (const [k, v] of Object.entries((obj.binaryData ?? {}) as Record<string, string>)) out.set(k, Buffer.from(v, 'base64'))
  return out
}

function keyFiles (data: Map<string, Buffer>, items: KeyItem[] | undefined, optional: boolean): VolumeFile[] {
  const wanted = items ?? [...data.keys()].map(key => ({ key, path: key }))
  return wanted.flatMap((i: KeyItem) => {
    const content = data.get(i.key)
    if (content === undefined) {
      if (optional) return []
      throw new ProjectionError(`configuration key "${i.key}" not found`)
    }
    return [{ path: i.path, data: content, mode: i.mode }]
  })
}

/**
 * A token for the pod's service account bound to the pod (so it dies with it), as the kubelet asks for one: the
 * audience of the source (default: the API server's), the requested lifetime (at least 10 minutes).
 */
async function requestToken (client: ApiClient, pod: Pod, src: NonNullable<ProjectedSource['serviceAccountToken']>): Promise<{ token: string; expiresAtMs: number }> {
  const account = String((pod.spec as unknown as Record<string, unknown>).serviceAccountName ?? 'default')
  const answer = await client.create(`/api/v1/namespaces/${pod.metadata.namespace}/serviceaccounts/${account}/token`, {
    apiVersion: 'authentication.k8s.io/v1',
    kind: 'TokenRequest',
    spec: {
      audiences: src.audience === undefined || src.audience === '' ? [] : [src.audience],
      expirationSeconds: src.expirationSeconds ?? DEFAULT_TOKEN_SECONDS,
      boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name: pod.metadata.name, uid: pod.metadata.uid }
    }
  })
  const status = answer.status as { token?: string; expirationTimestamp?: string } | undefined
  if (typeof status?.token !== 'string') throw new ProjectionError(`the API server returned no token for service account "${account}"`)
  return { token: status.token, expiresAtMs: Date.parse(status.expirationTimestamp ?? '') }
}

/**
 * Every file of a projected volume's sources. A token is fetched again once 80% of its life has passed (or after 24
 * hours), as the kubelet's token manager does.
 */
export async function projectedFiles (pod: Pod, sources: ProjectedSource[], client: ApiClient | undefined, now: number): Promise<ProjectedFiles> {
  const out: ProjectedFiles = { files: [] }
  for (const s of sources) {
    if (s.downwardAPI !== undefined) { out.files.push(...downwardFiles(pod, s.downwardAPI.items ?? [])); continue }
    if (client === undefined) throw new ProjectionError('projected volumes with tokens, configMaps or secrets need an API server connection (--orchconfig)')
    if (s.serviceAccountToken !== undefined) {
      const t = await requestToken(client, pod, s.serviceAccountToken)
      out.files.push({ path: s.serviceAccountToken.path, data: Buffer.from(t.token), mode: undefined })
      const life = Number.isFinite(t.expiresAtMs) ? t.expiresAtMs - now : DEFAULT_TOKEN_SECONDS * 1000
      const refresh = now + Math.min(life * 0.8, 24 * 3600 * 1000)
      out.refreshAtMs = Math.min(out.refreshAtMs ?? Infinity, refresh)
    } else if (s.configMap !== undefined || s.secret !== undefined) {
      const kind = s.configMap !== undefined ? 'configmaps' : 'secrets'
      const ref = (s.configMap ?? s.secret)!
      const optional = ref.optional === true
      const data = await objectData(client, kind, pod.metadata.namespace, ref.name, optional)
      if (data !== undefined) out.files.push(...keyFiles(data, ref.items, optional))
    }
  }
  return out
}
