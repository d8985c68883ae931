// Pod volumes as host folders: emptyDir, hostPath, configMap, secret, projected and downwardAPI, under <root-dir>/pods/<uid>/volumes.

import { existsSync, mkdirSync, renameSync, rmSync, statSync, writeFileSync, chmodSync } from 'node:fs'
import { dirname, join, normalize, isAbsolute } from 'node:path'
import type { ApiClient, JsonObject } from '../../apiserver/client/rest-client.js'
import { isNotFound } from '../../apiserver/client/rest-client.js'
import type { Pod, Volume } from './pod-types.js'
import type { Mount } from '../runtime/runtime.js'
import { downwardFiles, ProjectionError, projectedFiles, type VolumeFile } from './projected-volume.js'

export class VolumeError extends Error {
  readonly volume: string
  constructor (volume: string, message: string) {
    super(`volume "${volume}": ${message}`)
    this.name = 'VolumeError'
    this.volume = volume
  }
}

export interface VolumeDeps {
  rootDir: string
  /** Absent in standalone mode: configMap and secret volumes then fail with a clear error. */
  client?: ApiClient
}

export function podDir (rootDir: string, uid: string): string { return join(rootDir, 'pods', uid) }

/** The plugin folder a volume the orchlet makes lives in (kubelet: kubernetes.io~empty-dir, ...); undefined for hostPath. */
function pluginDir (v: Volume): string | undefined {
  if (v.emptyDir !== undefined) return 'orch.io~empty-dir'
  if (v.configMap !== undefined) return 'orch.io~configmap'
  if (v.secret !== undefined) return 'orch.io~secret'
  if (v.projected !== undefined) return 'orch.io~projected'
  if (v.downwardAPI !== undefined) return 'orch.io~downward-api'
  return undefined
}

/** Where the orchlet keeps a pod's own volume on the host (<root-dir>/pods/<uid>/volumes/<plugin>/<name>); undefined for hostPath. */
export function podVolumeDir (rootDir: string, uid: string, v: Volume): string | undefined {
  const plugin = pluginDir(v)
  return plugin === undefined ? undefined : join(podDir(rootDir, uid), 'volumes', plugin, v.name)
}

function checkHostPath (v: Volume & { hostPath: NonNullable<Volume['hostPath']> }): string {
  const { path, type = '' } = v.hostPath
  if (!isAbsolute(path)) throw new VolumeError(v.name, `hostPath.path must be absolute, not "${path}"`)
  const exists = existsSync(path)
  const stat = exists ? statSync(path) : undefined
  switch (type) {
    case '': return path
    case 'DirectoryOrCreate': if (!exists) mkdirSync(path, { recursive: true, mode: 0o755 }); else if (!stat!.isDirectory()) throw new VolumeError(v.name, `${path} is not a directory`); return path
    case 'Directory': if (!stat?.isDirectory()) throw new VolumeError(v.name, `hostPath type check failed: ${path} is not a directory`); return path
    case 'FileOrCreate': if (!exists) { mkdirSync(dirname(path), { recursive: true }); writeFileSync(path, '', { mode: 0o644 }) } else if (!stat!.isFile()) throw new VolumeError(v.name, `${path} is not a file`); return path
    case 'File': if (!stat?.isFile()) throw new VolumeError(v.name, `hostPath type check failed: ${path} is not a file`); return path
    case 'Socket': if (!stat?.isSocket()) throw new VolumeError(v.name, `hostPath type check failed: ${path} is not a socket file`); return path
    case 'CharDevice': if (!stat?.isCharacterDevice()) throw new VolumeError(v.name, `hostPath type check failed: ${path} is not a character device`); return path
    case 'BlockDevice': if (!stat?.isBlockDevice()) throw new VolumeError(v.name, `hostPath type check failed: ${path} is not a block device`); return path
    default: throw new VolumeError(v.name, `unsupported hostPath type "${type}"`)
  }
}

/** Writes `files` (relative path -> bytes) into dir, honouring items/defaultMode like the kubelet's atomic writer (without the symlink swap). */
function writeProjected (dir: string, volume: string, data: Map<string, Buffer>, items: Array<{ key: string; path: string; mode?: number }> | undefined, defaultMode: number): void {
  rmSync(dir, { recursive: true, force: true })
  mkdirSync(dir, { recursive: true, mode: 0o755 })
  const entries = items ?? [...data.keys()].map(key => ({ key, path: key, mode: undefined }))
  for (const item of entries) {
    const content = data.get(item.key)
    if (content === undefined) throw new VolumeError(volume, `configuration key "${item.key}" not found`)
    const rel = normalize(item.path)
    if (isAbsolute(rel) || rel.startsWith('..')) throw new VolumeError(volume, `item path "${item.path}" must be relative and stay inside the volume`)
    const file = join(dir, rel)
    mkdirSync(dirname(file), { recursive: true })
    writeFileSync(file, content)
    chmodSync(file, item.mode ?? defaultMode)
  }
}

async function fetchData (deps: VolumeDeps, volume: string, kind: 'configmaps' | 'secrets', namespace: string, name: string, optional: boolean): Promise<Map<string, Buffer> | undefined> {
  if (deps.client === undefined) throw new VolumeError(volume, `${kind === 'configmaps' ? 'configMap' : 'secret'} volumes need an API server connection (--orchconfig)`)
  let obj: JsonObject
  try {
    obj = await deps.client.get(`/api/v1/namespaces/${namespace}/${kind}/${name}`)
  } catch (err) {
    if (isNotFound(err)) {
      if (optional) return undefined
      throw new VolumeError(volume, `${kind === 'configmaps' ? 'configmap' : 'secret'} "${name}" not found`)
    }
    throw err
  }
  const out = new Map<string, Buffer>()
  const data = (obj.data ?? {}) as Record<string, string>
  const binary = (obj.binaryData ?? {}) as Record<string, string>
  for (const [k, val] of Object.entries(data)) out.set(k, kind === 'secrets' ? Buffer.from(val, 'base64') : Buffer.from(val, 'utf8'))
  for (const [k, val] of Object.entries(binary)) out.set(k, Buffer.from(val, 'base64'))
  return out
}

/**
 * Writes a volume's files; each file goes through a temporary name and a rename, so a container reading it (a token
 * being refreshed) sees the old or the new content, never half of one.
 */
function writeFiles (dir: string, volume: string, files: VolumeFile[], defaultMode: number): void {
  mkdirSync(dir, { recursive: true, mode: 0o755 })
  for (const f of files) {
    const rel = normalize(f.path)
    if (isAbsolute(rel) || rel.startsWith('..')) throw new VolumeError(volume, `item path "${f.path}" must be relative and stay inside the volume`)
    const file = join(dir, rel)
    mkdirSync(dirname(file), { recursive: true })
    const tmp = `${file}.${process.pid}.tmp`
    writeFileSync(tmp, f.data, { mode: f.mode ?? defaultMode })
    chmodSync(tmp, f.mode ?? defaultMode)
    renameSync(tmp, file)
  }
}

async function writeProjectedVolume (pod: Pod, v: Volume & { projected: NonNullable<Volume['projected']> }, dir: string, deps: VolumeDeps, now: number): Promise<number | undefined> {
  try {
    const projected = await projectedFiles(pod, v.projected.sources ?? [], deps.client, now)
    writeFiles(dir, v.name, projected.files, v.projected.defaultMode ?? 0o644)
    return projected.refreshAtMs
  } catch (err) {
    if (err instanceof ProjectionError) throw new VolumeError(v.name, err.message)
    throw err
  }
}

export interface PreparedVolumes {
  /** Volume name -> host path. */
  paths: Map<string, string>
  /** When a projected token is due for refreshing (refreshVolumes); undefined when the pod has none. */
  refreshAtMs?: number
}

const projectedDir = (base: string, name: string): string => join(base, pluginDir({ name, projected: {} })!, name)

/** Makes every volume of the pod present on the host. */
export async function prepareVolumes (pod: Pod, deps: VolumeDeps, now = Date.now()): Promise<PreparedVolumes> {
  const base = join(podDir(deps.rootDir, pod.metadata.uid), 'volumes')
  const out = new Map<string, string>()
  let refreshAtMs: number | undefined
  for (const v of pod.spec.volumes ?? []) {
    if (v.emptyDir !== undefined) {
      const dir = join(base, pluginDir(v)!, v.name)
      mkdirSync(dir, { recursive: true, mode: 0o777 })
      out.set(v.name, dir)
    } else if (v.hostPath !== undefined) {
      out.set(v.name, checkHostPath(v as Volume & { hostPath: NonNullable<Volume['hostPath']> }))
    } else if (v.configMap !== undefined) {
      const dir = join(base, pluginDir(v)!, v.name)
      const data = await fetchData(deps, v.name, 'configmaps', pod.metadata.namespace, v.configMap.name, v.configMap.optional === true)
      writeProjected(dir, v.name, data ?? new Map(), data === undefined ? [] : v.configMap.items, v.configMap.defaultMode ?? 0o644)
      out.set(v.name, dir)
    } else if (v.secret !== undefined) {
      const dir = join(base, pluginDir(v)!, v.name)
      const data = await fetchData(deps, v.name, 'secrets', pod.metadata.namespace, v.secret.secretName, v.secret.optional === true)
      writeProjected(dir, v.name, data ?? new Map(), data === undefined ? [] : v.secret.items, v.secret.defaultMode ?? 0o644)
      out.set(v.name, dir)
    } else if (v.projected !== undefined) {
      const dir = projectedDir(base, v.name)
      rmSync(dir, { recursive: true, force: true })
      const at = await writeProjectedVolume(pod, v as Volume & { projected: NonNullable<Volume['projected']> }, dir, deps, now)
      if (at !== undefined) refreshAtMs = Math.min(refreshAtMs ?? Infinity, at)
      out.set(v.name, dir)
    } else if (v.downwardAPI !== undefined) {
      const dir = join(base, pluginDir(v)!, v.name)
      rmSync(dir, { recursive: true, force: true })
      try { writeFiles(dir, v.name, downwardFiles(pod, v.downwardAPI.items ?? []), v.downwardAPI.defaultMode ?? 0o644) } catch (err) {
        if (err instanceof ProjectionError) throw new VolumeError(v.name, err.message)
        throw err
      }
      out.set(v.name, dir)
    } else {
      throw new VolumeError(v.name, 'unsupported volume source (supported: emptyDir, hostPath, configMap, secret, projected, downwardAPI)')
    }
  }
  return { paths: out, refreshAtMs }
}

/** Writes the projected volumes of a running pod again (fresh tokens); returns when to do it next. */
export async function refreshVolumes (pod: Pod, deps: VolumeDeps, now = Date.now()): Promise<number | undefined> {
  const base = join(podDir(deps.rootDir, pod.metadata.uid), 'volumes')
  let refreshAtMs: number | undefined
  for (const v of pod.spec.volumes ?? []) {
    if (v.projected === undefined || !(v.projected.sources ?? []).some(s => s.serviceAccountToken !== undefined)) continue
    const at = await writeProjectedVolume(pod, v as Volume & { projected: NonNullable<Volume['projected']> }, projectedDir(base, v.name), deps, now)
    if (at !== undefined) refreshAtMs = Math.min(refreshAtMs ?? Infinity, at)
  }
  return refreshAtMs
}

/** The runtime mounts of one container from its volumeMounts. */
export function containerMounts (pod: Pod, mounts: Array<{ name: string; mountPath: string; subPath?: string; readOnly?: boolean }> | undefined, volumes: Map<string, string>): Mount[] {
  return (mounts ?? []).map(m => {
    const host = volumes.get(m.name)
    if (host === undefined) throw new VolumeError(m.name, `not found in pod ${pod.metadata.namespace}/${pod.metadata.name}`)
    let hostPath = host
    if (m.subPath) {
      const rel = normalize(m.subPath)
      if (isAbsolute(rel) || rel.startsWith('..')) throw new VolumeError(m.name, `subPath "${m.subPath}" must be relative and stay inside the volume`)
      hostPath = join(host, rel)
      if (!existsSync(hostPath)) mkdirSync(hostPath, { recursive: true })
    }
    return { containerPath: m.mountPath, hostPath, readonly: m.readOnly === true }
  })
}

/** Removes the pod's own folders (emptyDir, projected files); hostPath volumes are never touched. */
export function cleanupPodDir (rootDir: string, uid: string): void {
  rmSync(podDir(rootDir, uid), { recursive: true, force: true })
}
