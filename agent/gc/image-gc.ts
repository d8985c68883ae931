// Image garbage collection as the kubelet's image GC manager: unused images, least recently used first, down to the low threshold.

import type { ContainerRuntime, Image } from '../runtime/runtime.js'

export interface ImageGcPolicy {
  /** Disk use percent at or above which collection runs (100: never). */
  highPercent: number
  /** Disk use percent collection frees down to. */
  lowPercent: number
  /** Images first seen less than this long ago are kept (--image-minimum-gc-age). */
  minAgeMs: number
  /** Images unused for longer than this are removed whatever the disk use (ImageMaximumGCAge); 0: off. */
  maxAgeMs: number
}

export interface ImageGcDeps {
  runtime: ContainerRuntime
  policy: ImageGcPolicy
  /** The image filesystem's figures (statfs of where the runtime keeps images). */
  fsStats(): Promise<{ capacityBytes: number, availableBytes: number } | undefined> | { capacityBytes: number, availableBytes: number } | undefined
  now(): number
  /** When collection began (the orchlet's start); absent: when this collector is made. */
  beganAt?: number
  /** A failure the kubelet reports as an ImageGCFailed event on the node. */
  onFailure?(message: string): void
  logger: { info(o: object, m?: string): void, warn(o: object, m?: string): void }
}

interface Record { firstDetected: number, lastUsed: number, size: number, image: Image }

export interface ImageGc {
  /** Notes the images present and those containers use (done before every collection). */
  detect(): Promise<Set<string>>
  /** One collection round; resolves with the bytes freed. */
  garbageCollect(): Promise<number>
  /** Removes every unused image past the minimum age (node-level reclaim under disk pressure: DeleteUnusedImages). */
  deleteUnused(): Promise<number>
}

export function createImageGc (d: ImageGcDeps): ImageGc {
  const records = new Map<string, Record>()
  /** When collection began (the kubelet's beganGC): the maximum age counts from here at the earliest. */
  const began = d.beganAt ?? d.now()

  async function detect (): Promise<Set<string>> {
    const now = d.now()
    const images = await d.runtime.images.listImages()
    const containers = await d.runtime.runtime.listContainers()
    // An image is in use while any container (running or not) refers to it, by id or by the name it was made from.
    const used = new Set<string>()
    for (const c of containers) {
      const hit = images.find(i => i.id === c.imageRef || i.id === c.image.image || i.repoTags.includes(c.image.image) || i.repoDigests.includes(c.image.image))
      if (hit !== undefined) used.add(hit.id)
    }
    const present = new Set(images.map(i => i.id))
    for (const i of images) {
      const r = records.get(i.id) ?? { firstDetected: now, lastUsed: 0, size: i.size, image: i }
      r.size = i.size
      r.image = i
      if (used.has(i.id)) r.lastUsed = now
      records.set(i.id, r)
    }
    for (const id of records.keys()) if (!present.has(id)) records.delete(id)
    return used
  }

  /** Least recently used first (then the oldest detected); in-use and too young images are skipped. */
  async function freeSpace (bytesToFree: number, used: Set<string>, now: number): Promise<number> {
    const candidates = [...records.entries()].filter(([id]) => !used.has(id))
      .sort(([, a], [, b]) => a.lastUsed - b.lastUsed || a.firstDetected - b.firstDetected)
    let freed = 0
    for (const [id, r] of candidates) {
      if (freed >= bytesToFree) break
      if (now - r.firstDetected < d.policy.minAgeMs) continue
      try {
        await d.runtime.images.removeImage({ image: id })
      } catch (err) {
        d.logger.warn({ image: id, err: (err as Error).message }, 'image garbage collection: removing an image failed')
        continue
      }
      records.delete(id)
      freed += r.size
      d.logger.info({ image: r.image.repoTags[0] ?? id, size: r.size }, 'image garbage collection removed an image')
    }
    return freed
  }

  /**
   * freeOldImages: every unused image not used for longer than the maximum age is removed, whatever the disk use.
   * Nothing is removed before the maximum age has passed since collection began (the orchlet started): until then an
   * image never seen in use is not known to be old. An image never seen in use counts as last used at time zero.
   */
  async function removeOld (used: Set<string>, now: number): Promise<number> {
    if (d.policy.maxAgeMs <= 0 || now - began <= d.policy.maxAgeMs) return 0
    let freed = 0
    for (const [id, r] of [...records]) {
      if (used.has(id) || now - r.lastUsed <= d.policy.maxAgeMs) continue
      try {
        await d.runtime.images.removeImage({ image: id })
      } catch (err) {
        d.logger.warn({ image: id, err: (err as Error).message }, 'image garbage collection: removing an image past the maximum age failed')
        continue
      }
      records.delete(id)
      freed += r.size
      d.logger.info({ image: r.image.repoTags[0] ?? id, size: r.size, maxAgeMs: d.policy.maxAgeMs }, 'image garbage collection removed an image unused for longer than the maximum age')
    }
    return freed
  }

  return {
    detect,
    async garbageCollect () {
      const used = await detect()
      const now = d.now()
      let freed = await removeOld(used, now)
      if (d.policy.highPercent >= 100) return freed
      const fs = await d.fsStats()
      if (fs === undefined || fs.capacityBytes <= 0) { d.onFailure?.('invalid capacity 0 on image filesystem'); return freed }
      const available = Math.min(fs.availableBytes, fs.capacityBytes)
      const usagePercent = 100 - Math.floor(available * 100 / fs.capacityBytes)
      if (usagePercent < d.policy.highPercent) return freed
      const amountToFree = Math.floor(fs.capacityBytes * (100 - d.policy.lowPercent) / 100) - available
      d.logger.info({ usagePercent, highThreshold: d.policy.highPercent, amountToFree }, 'disk usage on image filesystem is over the high threshold, trying to free bytes down to the low threshold')
      const got = await freeSpace(amountToFree, used, now)
      freed += got
      if (got < amountToFree) d.onFailure?.(`Failed to garbage collect required amount of images. Attempted to free ${amountToFree} bytes, but only found ${got} bytes eligible to free.`)
      return freed
    },
    async deleteUnused () {
      const used = await detect()
      return await freeSpace(Number.MAX_SAFE_INTEGER, used, d.now())
    }
  }
}
