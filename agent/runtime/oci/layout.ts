// OCI image layouts (a directory, or a tar/tar.gz archive of one): oci-layout, index.json and blobs/sha256/*,
// read as a BlobSource for offline imports.
import { readFile, stat } from 'node:fs/promises'
import { join } from 'node:path'
import { OciError } from './errors.js'
import { assertDigest } from './digest.js'
import { parseManifestOrIndex } from './manifest.js'
import type { Descriptor } from './manifest.js'
import { readTar } from './tar.js'
import type { BlobSource } from './image-fetch.js'

export interface LayoutImage {
  descriptor: Descriptor
  /** A full reference from the index annotations (containerd's image name, or a ref.name that is one). */
  name?: string
  /** `org.opencontainers.image.ref.name` as written (often just a tag). */
  refName?: string
}

export interface ImageLayout { images: LayoutImage[]; source: BlobSource }

const REF_NAME = 'org.opencontainers.image.ref.name'
const CONTAINERD_NAME = 'io.containerd.image.name'

function blobFile (digest: string): string {
  const d = assertDigest(digest)
  return `blobs/sha256/${d.slice('sha256:'.length)}`
}

/** Open a layout directory or archive. Reads of a directory are lazy; an archive is read into memory once. */
export async function openLayout (path: string): Promise<ImageLayout> {
  let read: (name: string) => Promise<Buffer | undefined>
  let info
  try { info = await stat(path) } catch { throw new OciError('OCI_ERR_NOT_FOUND', `no image layout at ${path}`) }
  if (info.isDirectory()) {
    read = async name => { try { return await readFile(join(path, name)) } catch { return undefined } }
  } else {
    const files = new Map<string, Buffer>()
    for (const e of readTar(await readFile(path))) if (e.type === 'file') files.set(e.name, e.data)
    read = async name => files.get(name)
  }
  const layoutFile = await read('oci-layout')
  if (!layoutFile) throw new OciError('OCI_ERR_BAD_CONTENT', `${path} is not an OCI image layout (no oci-layout file)`)
  let version: unknown
  try { version = JSON.parse(layoutFile.toString('utf8')).imageLayoutVersion } catch { version = undefined }
  if (version !== '1.0.0') throw new OciError('OCI_ERR_UNSUPPORTED', `unsupported imageLayoutVersion ${JSON.stringify(version)}`)
  const indexBytes = await read('index.json')
  if (!indexBytes) throw new OciError('OCI_ERR_BAD_CONTENT', `${path} has no index.json`)
  const index = parseManifestOrIndex(indexBytes, 'application/vnd.oci.image.index.v1+json')
  if (index.kind !== 'index') throw new OciError('OCI_ERR_BAD_CONTENT', 'index.json is not an image index')
  const images = index.manifests.map(d => {
    const refName = d.annotations?.[REF_NAME]
    const full = d.annotations?.[CONTAINERD_NAME] ?? (refName !== undefined && /[/:@]/.test(refName) ? refName : undefined)
    return { descriptor: d, name: full, refName }
  })
  const mediaTypes = new Map(index.manifests.map(d => [d.digest, d.mediaType]))
  const get = async (digest: string): Promise<Buffer> => {
    const bytes = await read(blobFile(digest))
    if (!bytes) throw new OciError('OCI_ERR_NOT_FOUND', `blob ${digest} missing from the layout`)
    return bytes
  }
  const source: BlobSource = {
    manifest: async reference => {
      const hit = images.find(i => i.descriptor.digest === reference || i.refName === reference || i.name === reference)
      const digest = hit?.descriptor.digest ?? reference
      return { bytes: await get(digest), mediaType: mediaTypes.get(digest) }
    },
    blob: async d => await get(d.digest)
  }
  return { images, source }
}
