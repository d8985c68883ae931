// The wasm runtime's CRI ImageService over the OCI content store: pull from a registry, import a layout
// archive, status/list/remove. OCI errors become RuntimeErrors (ImagePullFailed, NotFound, InvalidArgument).
import type { AuthConfig, Image, ImageService, ImageSpec } from '../runtime.js'
import { RuntimeError } from '../runtime.js'
import { OciError } from '../oci/errors.js'
import { ImageStore } from '../oci/store.js'
import type { ImageRecord } from '../oci/store.js'
import { formatReference, parseReference } from '../oci/reference.js'
import { registrySource } from '../oci/registry-client.js'
import type { RegistryClientOptions } from '../oci/registry-client.js'
import { fetchWasmImage } from '../oci/image-fetch.js'
import { openLayout } from '../oci/layout.js'

export interface WasmImageService extends ImageService {
  /** Import every image of an OCI image layout (directory, .tar or .tar.gz); `name` names tag-only entries. */
  importImage: (path: string, opts?: { name?: string }) => Promise<Image[]>
  /** The stored record of an image (by ref or id), or undefined. */
  resolve: (refOrId: string) => ImageRecord | undefined
  readModule: (record: ImageRecord) => Promise<Buffer>
}

export function toCriImage (r: ImageRecord): Image {
  return { id: r.id, repoTags: [...r.repoTags], repoDigests: [...r.repoDigests], size: r.size }
}

function pullError (ref: string, err: unknown): RuntimeError {
  if (err instanceof RuntimeError) return err
  if (err instanceof OciError && err.code === 'OCI_ERR_BAD_REFERENCE') return new RuntimeError('InvalidArgument', err.message)
  return new RuntimeError('ImagePullFailed', `pulling ${ref}: ${(err as Error).message}`)
}

export function createWasmImageService (store: ImageStore, registry: RegistryClientOptions): WasmImageService {
  const resolve = (refOrId: string): ImageRecord | undefined => store.find(refOrId)
  return {
    resolve,
    readModule: async r => await store.readBlob(r.moduleDigest),

    async listImages (filter) {
      const all = store.list()
      if (!filter?.image?.image) return all.map(toCriImage)
      const hit = resolve(filter.image.image)
      return hit ? [toCriImage(hit)] : []
    },

    async imageStatus (image: ImageSpec) {
      const hit = resolve(image.image)
      return hit ? toCriImage(hit) : undefined
    },

    async pullImage (image: ImageSpec, auth?: AuthConfig) {
      try {
        const ref = parseReference(image.image)
        const source = registrySource(ref, auth ?? {}, registry)
        const record = await fetchWasmImage(source, ref.digest ?? ref.tag ?? 'latest', store, formatReference(ref))
        return record.id
      } catch (err) {
        throw pullError(image.image, err)
      }
    },

    async removeImage (image: ImageSpec) {
      const hit = resolve(image.image)
      if (hit) await store.removeImage(hit.id)
    },

    async imageFsInfo () {
      const u = await store.usage()
      return [{ ...u, mountpoint: store.rootDir }]
    },

    async importImage (path, opts = {}) {
      try {
        const layout = await openLayout(path)
        const out: Image[] = []
        for (const img of layout.images) {
          let name = img.name
          if (name === undefined && opts.name !== undefined) name = img.refName !== undefined ? `${opts.name}:${img.refName}` : opts.name
          const ref = name !== undefined ? formatReference(parseReference(name)) : undefined
          out.push(toCriImage(await fetchWasmImage(layout.source, img.descriptor.digest, store, ref)))
        }
        return out
      } catch (err) {
        throw pullError(path, err)
      }
    }
  }
}
