// A pod's local ephemeral storage in the Summary API's shape: container logs and writable layers, its volumes, the total.

import { readdir } from 'node:fs/promises'
import { join } from 'node:path'
import { podLogDir } from '../pods/container-config.js'
import type { Pod, Volume } from '../pods/pod-types.js'
import { podDir, podVolumeDir } from '../pods/volumes.js'

export interface StorageSources {
  /** The orchlet's root dir: pod volumes live under <root>/pods/<uid>/volumes. */
  rootDir: string
  /** Where container logs are kept (<logs>/<ns>_<name>_<uid>/<container>/). */
  logsRoot: string
  /** du of a path (bytes on disk); undefined when it does not exist. */
  diskUsage(path: string): Promise<number | undefined>
}

/** IsLocalEphemeralVolume: the volumes counted in the pod's ephemeral storage (tmpfs-backed kinds are not). */
export function isLocalEphemeralVolume (v: Volume): boolean {
  return (v.emptyDir !== undefined && (v.emptyDir.medium ?? '') === '') || v.configMap !== undefined || v.downwardAPI !== undefined
}

/** The container's log files, every attempt and rotation (the kubelet's container `logs` FsStats). */
export async function containerLogsBytes (s: StorageSources, pod: Pod, container: string): Promise<number | undefined> {
  return await s.diskUsage(join(podLogDir(s.logsRoot, pod), container))
}

/**
 * The files directly in the pod's log directory, not its containers' folders (the kubelet's getPodLogStats);
 * undefined when the directory does not exist.
 */
export async function podLogFilesBytes (s: StorageSources, pod: Pod): Promise<number | undefined> {
  const dir = podLogDir(s.logsRoot, pod)
  let entries
  try { entries = await readdir(dir, { withFileTypes: true }) } catch { return undefined }
  let total = 0
  for (const e of entries) {
    if (e.isDirectory()) continue
    total += await s.diskUsage(join(dir, e.name)) ?? 0
  }
  return total
}

/**
 * The pod's hosts file where one is written at the kubelet's place, <root>/pods/<uid>/etc-hosts (getPodEtcHostsStats);
 * undefined when there is none (containerd's CRI pods get theirs from the runtime, outside the root dir).
 */
export async function podEtcHostsBytes (s: StorageSources, pod: Pod): Promise<number | undefined> {
  return await s.diskUsage(join(podDir(s.rootDir, pod.metadata.uid), 'etc-hosts'))
}

/** Usage of each volume the orchlet keeps for the pod (hostPath volumes are the host's, not the pod's). */
export async function podVolumeStats (s: StorageSources, pod: Pod): Promise<Array<{ name: string, usedBytes: number }>> {
  const out: Array<{ name: string, usedBytes: number }> = []
  for (const v of pod.spec.volumes ?? []) {
    const dir = podVolumeDir(s.rootDir, pod.metadata.uid, v)
    if (dir === undefined) continue
    const used = await s.diskUsage(dir)
    if (used !== undefined) out.push({ name: v.name, usedBytes: used })
  }
  return out
}

/** What calcEphemeralStorage adds besides the containers and volumes: the pod's own log files and its etc-hosts file. */
export interface PodHostFiles { podLogsBytes?: number, etcHostsBytes?: number }

/**
 * calcEphemeralStorage: every container's writable layer and logs, the pod's local ephemeral volumes, the files in
 * the pod's log directory and its etc-hosts file.
 */
export function podEphemeralBytes (pod: Pod, containers: ReadonlyArray<{ rootfsBytes?: number, logsBytes?: number }>, volumes: ReadonlyArray<{ name: string, usedBytes: number }>, host: PodHostFiles = {}): number {
  let total = containers.reduce((a, c) => a + (c.rootfsBytes ?? 0) + (c.logsBytes ?? 0), 0)
  for (const v of volumes) {
    const spec = pod.spec.volumes?.find(x => x.name === v.name)
    if (spec !== undefined && isLocalEphemeralVolume(spec)) total += v.usedBytes
  }
  return total + (host.podLogsBytes ?? 0) + (host.etcHostsBytes ?? 0)
}
