// The content-addressed image store under a root dir: verified blobs in blobs/sha256/<hex>, image records in
// images.json (rewritten atomically on every change, so pulled and imported images survive restarts).
import { mkdir, readFile, rename, rm, writeFile, stat } from 'node:fs/promises'
import { join } from 'node:path'
import { randomBytes } from 'node:crypto'
import { OciError } from './errors.js'
import { assertDigest, isDigest, verifyDigest } from './digest.js'
import { normalizeReference, parseReference } from './reference.js'
import type { ImageConfig } from './manifest.js'

export interface ImageRecord {
  /** The config digest, as containerd reports an image id. */
  id: string
  manifestDigest: string
  /** Normalised `registry/repo:tag` references. */
  repoTags: string[]
  /** `registry/repo@sha256:...` */
  repoDigests: string[]
  /** Bytes kept for the image (module + config + manifest). */
  size: number
  /** Digest of the wasm module bytes, a blob in this store. */
  moduleDigest: string
  config: ImageConfig
}

export class ImageStore {
  private readonly images = new Map<string, ImageRecord>()
  /** Saves run one after another, so an older snapshot never lands after a newer one. */
  private saving: Promise<void> = Promise.resolve()
  private constructor (readonly rootDir: string) {}

  static async open (rootDir: string): Promise<ImageStore> {
    const store = new ImageStore(rootDir)
    await mkdir(join(rootDir, 'blobs', 'sha256'), { recursive: true })
    let text: string | undefined
    try { text = await readFile(join(rootDir, 'images.json'), 'utf8') } catch { text = undefined }
    if (text !== undefined) {
      let records: ImageRecord[]
      try { records = JSON.parse(text) } catch (err) { throw new OciError('OCI_ERR_BAD_CONTENT', `${join(rootDir, 'images.json')} is not valid JSON`, { cause: err }) }
      for (const r of records) store.images.set(r.id, r)
    }
    return store
  }

  blobPath (digest: string): string {
    return join(this.rootDir, 'blobs', 'sha256', assertDigest(digest).slice('sha256:'.length))
  }

  /** Verify `bytes` against `digest` and store them; an existing blob is kept. */
  async putBlob (digest: string, bytes: Uint8Array): Promise<void> {
    verifyDigest(bytes, digest)
    const path = this.blobPath(digest)
    if (await exists(path)) return
    const tmp = `${path}.tmp-${randomBytes(6).toString('hex')}`
    await writeFile(tmp, bytes)
    await rename(tmp, path)
  }

  /** Read a blob and re-verify it, so on-disk corruption is caught before a module runs. */
  async readBlob (digest: string): Promise<Buffer> {
    let bytes: Buffer
    try { bytes = await readFile(this.blobPath(digest)) } catch { throw new OciError('OCI_ERR_NOT_FOUND', `blob ${digest} not in the store`) }
    verifyDigest(bytes, digest, 'stored blob')
    return bytes
  }

  list (): ImageRecord[] {
    return [...this.images.values()].map(r => structuredClone(r))
  }

  /** Find by image id (full digest or a hex prefix of 12+), by tag reference, or by digest reference. */
  find (refOrId: string): ImageRecord | undefined {
    const direct = this.images.get(refOrId) ?? this.images.get(`sha256:${refOrId}`)
    if (direct) return structuredClone(direct)
    if (/^(sha256:)?[a-f0-9]{12,64}$/.test(refOrId) && !isDigest(refOrId)) {
      const hex = refOrId.replace(/^sha256:/, '')
      const hits = [...this.images.values()].filter(r => r.id.slice(7).startsWith(hex))
      if (hits.length === 1) return structuredClone(hits[0])
    }
    let ref: string
    try { ref = normalizeReference(refOrId) } catch { return undefined }
    const parsed = parseReference(ref)
    for (const r of this.images.values()) {
      if (parsed.digest !== undefined) {
        if (r.manifestDigest === parsed.digest && r.repoDigests.some(d => d.startsWith(`${parsed.registry}/${parsed.repository}@`))) return structuredClone(r)
      } else if (r.repoTags.includes(ref)) return structuredClone(r)
    }
    return undefined
  }

  /** Record an image; `ref` (if any) becomes its tag or digest reference, moving a tag off any other image. */
  async addImage (record: Omit<ImageRecord, 'repoTags' | 'repoDigests'>, ref?: string): Promise<ImageRecord> {
    const existing = this.images.get(record.id)
    const next: ImageRecord = { ...record, repoTags: existing?.repoTags ?? [], repoDigests: existing?.repoDigests ?? [] }
    if (ref !== undefined) {
      const p = parseReference(ref)
      const repo = `${p.registry}/${p.repository}`
      if (p.tag !== undefined) {
        const tag = `${repo}:${p.tag}`
        for (const other of this.images.values()) other.repoTags = other.repoTags.filter(t => t !== tag)
        if (!next.repoTags.includes(tag)) next.repoTags.push(tag)
      }
      const dig = `${repo}@${record.manifestDigest}`
      if (!next.repoDigests.includes(dig)) next.repoDigests.push(dig)
    }
    this.images.set(record.id, next)
    await this.save()
    return structuredClone(next)
  }

  /** Remove an image with all its references; blobs no other image uses are deleted. */
  async removeImage (id: string): Promise<boolean> {
    const r = this.images.get(id)
    if (!r) return false
    this.images.delete(id)
    await this.save()
    const inUse = new Set<string>()
    for (const o of this.images.values()) inUse.add(o.id).add(o.manifestDigest).add(o.moduleDigest)
    for (const d of [r.id, r.manifestDigest, r.moduleDigest]) if (!inUse.has(d)) await rm(this.blobPath(d), { force: true })
    return true
  }

  async usage (): Promise<{ usedBytes: number; inodesUsed: number }> {
    const digests = new Set<string>()
    for (const r of this.images.values()) digests.add(r.id).add(r.manifestDigest).add(r.moduleDigest)
    let usedBytes = 0
    for (const d of digests) {
      try { usedBytes += (await stat(this.blobPath(d))).size } catch {}
    }
    return { usedBytes, inodesUsed: digests.size }
  }

  private async save (): Promise<void> {
    const next = this.saving.then(async () => { await this.writeIndex() })
    this.saving = next.catch(() => {})
    await next
  }

  private async writeIndex (): Promise<void> {
    const path = join(this.rootDir, 'images.json')
    const tmp = `${path}.tmp-${randomBytes(6).toString('hex')}`
    await writeFile(tmp, JSON.stringify([...this.images.values()]))
    await rename(tmp, path)
  }
}

async function exists (path: string): Promise<boolean> {
  try { await stat(path); return true } catch { return false }
}
