// A pod's local ephemeral storage in the Summary API's shape: container logs and writable layers, its volumes, the total.

import { join } from 'node:path'
import { podLogDir } from '../pods/container-config.js'
import type { Pod, Volume } from '../pods/pod-types.js'
import { podVolumeDir } from '../pods/volumes.js'

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

/** calcEphemeralStorage: every container's writable layer and logs, plus the pod's local ephemeral volumes. */
export function podEphemeralBytes (pod: Pod, containers: ReadonlyArray<{ rootfsBytes?: number, logsBytes?: number }>, volumes: ReadonlyArray<{ name: string, usedBytes: number }>): number {
  let total = containers.reduce((a, c) => a + (c.rootfsBytes ?? 0) + (c.logsBytes ?? 0), 0)
  for (const v of volumes) {
    const spec = pod.spec.volumes?.find(x => x.name === v.name)
    if (spec !== undefined && isLocalEphemeralVolume(spec)) total += v.usedBytes
  }
  return total
}
