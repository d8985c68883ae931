// Binds image GC, dead-container GC and log rotation to the orchlet's config and runtimes, on the kubelet's periods (5 min, 1 min, 10 s).

import type { OrchletConfig } from '../config/types.js'
import type { ContainerRuntime } from '../runtime/runtime.js'
import { fsUsage } from '../node/machine-stats.js'
import { createContainerGc, type ContainerGc } from './container-gc.js'
import { createImageGc, type ImageGc } from './image-gc.js'
import { createLogRotator, type LogRotator } from './log-rotation.js'

export interface NodeGcDeps {
  config: OrchletConfig
  runtimes(): ContainerRuntime[]
  isActivePod(uid: string): boolean
  now(): number
  /** ImageGCFailed and ContainerGCFailed warnings on the node. */
  onFailure(reason: string, message: string): void
  logger: { info(o: object, m?: string): void, warn(o: object, m?: string): void }
}

export interface NodeGc {
  images: Map<string, ImageGc>
  containers: ContainerGc
  logs: LogRotator
  /** Node-level reclaim for the eviction manager: every unused image past its minimum age. */
  reclaimImages(): Promise<void>
  reclaimContainers(): Promise<void>
  start(imagePeriodMs?: number, containerPeriodMs?: number): void
  stop(): void
}

/** Where the runtime keeps its images (its first image filesystem's mount point): the eviction manager's imagefs. */
export async function imageFsMountpoint (rt: ContainerRuntime): Promise<string | undefined> {
  const info = await rt.images.imageFsInfo().catch(() => [])
  return info[0]?.mountpoint
}

/** statfs of the filesystem the runtime keeps its images on. */
async function imageFsStats (rt: ContainerRuntime): Promise<{ capacityBytes: number, availableBytes: number } | undefined> {
  const mount = await imageFsMountpoint(rt)
  return mount === undefined ? undefined : fsUsage(mount)
}

export function createNodeGc (d: NodeGcDeps): NodeGc {
  const c = d.config
  const policy = {
    highPercent: c.imageGCHighThresholdPercent,
    lowPercent: c.imageGCLowThresholdPercent,
    minAgeMs: c.imageMinimumGCAge,
    // imageMaximumGCAge is accepted only with the ImageMaximumGCAge gate (validation); 0 is off.
    maxAgeMs: c.imageMaximumGCAge
  }
  const images = new Map<string, ImageGc>()
  // The kubelet's beganGC: the maximum image age counts from the orchlet's start, not from a runtime's first collection.
  const beganAt = d.now()
  const imageGcOf = (rt: ContainerRuntime): ImageGc => {
    let gc = images.get(rt.name)
    if (gc === undefined) {
      gc = createImageGc({ runtime: rt, policy, beganAt, fsStats: async () => await imageFsStats(rt), now: d.now, onFailure: m => d.onFailure('ImageGCFailed', m), logger: d.logger })
      images.set(rt.name, gc)
    }
    return gc
  }
  const containers = createContainerGc({
    runtimes: d.runtimes,
    policy: { minAgeMs: c.minimumContainerTTLDuration, maxPerPodContainer: c.maximumDeadContainersPerContainer, maxContainers: c.maximumDeadContainers },
    isActivePod: d.isActivePod,
    now: d.now,
    logger: d.logger
  })
  const logs = createLogRotator({ runtimes: d.runtimes, maxSizeBytes: c.containerLogMaxSize, maxFiles: c.containerLogMaxFiles, now: d.now, logger: d.logger })
  const timers: NodeJS.Timeout[] = []
  const every = (ms: number, what: string, fn: () => Promise<unknown>): void => {
    const t = setInterval(() => { fn().catch(err => d.onFailure(what, (err as Error).message)) }, ms)
    t.unref()
    timers.push(t)
  }
  return {
    images,
    containers,
    logs,
    async reclaimImages () { for (const rt of d.runtimes()) await imageGcOf(rt).deleteUnused() },
    async reclaimContainers () { await containers.garbageCollect(true) },
    start (imagePeriodMs = 300_000, containerPeriodMs = 60_000) {
      every(imagePeriodMs, 'ImageGCFailed', async () => { for (const rt of d.runtimes()) await imageGcOf(rt).garbageCollect() })
      every(containerPeriodMs, 'ContainerGCFailed', async () => await containers.garbageCollect())
      // The kubelet's container log manager checks every 10 s.
      every(10_000, 'ContainerLogRotationFailed', async () => await logs.rotateAll())
    },
    stop () { for (const t of timers.splice(0)) clearInterval(t) }
  }
}
