// OCI/Docker manifest, index and config documents: media types, parsing, platform choice and wasm layer choice.
import { OciError } from './errors.js'
import { assertDigest } from './digest.js'

export const MEDIA = {
  ociManifest: 'application/vnd.oci.image.manifest.v1+json',
  ociIndex: 'application/vnd.oci.image.index.v1+json',
  dockerManifest: 'application/vnd.docker.distribution.manifest.v2+json',
  dockerList: 'application/vnd.docker.distribution.manifest.list.v2+json',
  ociConfig: 'application/vnd.oci.image.config.v1+json',
  wasmLayer: 'application/vnd.wasm.content.layer.v1+wasm',
  wasmModuleLayer: 'application/vnd.module.wasm.content.layer.v1+wasm',
  ociLayerTar: 'application/vnd.oci.image.layer.v1.tar',
  ociLayerTarGzip: 'application/vnd.oci.image.layer.v1.tar+gzip',
  dockerLayerTarGzip: 'application/vnd.docker.image.rootfs.diff.tar.gzip'
} as const

/** The Accept header for manifest requests: every manifest and index type we read. */
export const MANIFEST_ACCEPT = [MEDIA.ociIndex, MEDIA.ociManifest, MEDIA.dockerList, MEDIA.dockerManifest].join(', ')

export const WASM_LAYER_TYPES: readonly string[] = [MEDIA.wasmLayer, MEDIA.wasmModuleLayer]
export const TAR_LAYER_TYPES: readonly string[] = [MEDIA.ociLayerTar, MEDIA.ociLayerTarGzip, MEDIA.dockerLayerTarGzip]

export interface Platform { os?: string; architecture?: string; variant?: string }

export interface Descriptor {
  mediaType: string
  digest: string
  size: number
  annotations?: Record<string, string>
  platform?: Platform
}

export interface Manifest { kind: 'manifest'; mediaType: string; config: Descriptor; layers: Descriptor[]; annotations?: Record<string, string> }
export interface Index { kind: 'index'; mediaType: string; manifests: Descriptor[] }

/** The parts of an image config a wasm runtime uses. */
export interface ImageConfig { entrypoint: string[]; cmd: string[]; env: string[]; workingDir?: string }

function bad (message: string): OciError {
  return new OciError('OCI_ERR_BAD_CONTENT', message)
}

function parseJson (bytes: Uint8Array, what: string): any {
  try {
    return JSON.parse(Buffer.from(bytes).toString('utf8'))
  } catch (err) {
    throw new OciError('OCI_ERR_BAD_CONTENT', `${what} is not valid JSON`, { cause: err })
  }
}

function descriptor (d: any, what: string): Descriptor {
  if (d === null || typeof d !== 'object' || typeof d.digest !== 'string' || typeof d.size !== 'number') throw bad(`${what}: bad descriptor`)
  assertDigest(d.digest)
  return { mediaType: String(d.mediaType ?? ''), digest: d.digest, size: d.size, annotations: d.annotations, platform: d.platform }
}

/** Parse a manifest or index; `mediaType` from the HTTP Content-Type wins when the document has none. */
export function parseManifestOrIndex (bytes: Uint8Array, mediaType?: string): Manifest | Index {
  const doc = parseJson(bytes, 'manifest')
  const mt = String(doc?.mediaType ?? mediaType ?? '').split(';')[0].trim()
  if (mt === MEDIA.ociIndex || mt === MEDIA.dockerList || (mt === '' && Array.isArray(doc?.manifests))) {
    if (!Array.isArray(doc.manifests)) throw bad('index has no manifests')
    return { kind: 'index', mediaType: mt || MEDIA.ociIndex, manifests: doc.manifests.map((d: any, i: number) => descriptor(d, `manifests[${i}]`)) }
  }
  if (mt === MEDIA.ociManifest || mt === MEDIA.dockerManifest || (mt === '' && Array.isArray(doc?.layers))) {
    if (!Array.isArray(doc.layers)) throw bad('manifest has no layers')
    return { kind: 'manifest', mediaType: mt || MEDIA.ociManifest, config: descriptor(doc.config, 'config'), layers: doc.layers.map((d: any, i: number) => descriptor(d, `layers[${i}]`)), annotations: doc.annotations }
  }
  throw new OciError('OCI_ERR_UNSUPPORTED', `unsupported manifest media type ${JSON.stringify(mt)}`)
}

/** Pick the manifest of an index to run: a wasm/wasi platform first, else the only entry, else the first. */
export function choosePlatformManifest (index: Index): Descriptor {
  const manifests = index.manifests.filter(d => d.mediaType !== MEDIA.ociIndex && d.mediaType !== MEDIA.dockerList)
  if (manifests.length === 0) throw new OciError('OCI_ERR_NOT_FOUND', 'index lists no manifests')
  const wasm = manifests.find(d => d.platform?.architecture === 'wasm' || (d.platform?.os ?? '').startsWith('wasi'))
  return wasm ?? manifests[0]
}

function strings (v: unknown): string[] {
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []
}

/** Read Entrypoint/Cmd/Env/WorkingDir from an OCI image config; configs of other shapes yield empty values. */
export function parseImageConfig (bytes: Uint8Array): ImageConfig {
  let doc: any
  try { doc = JSON.parse(Buffer.from(bytes).toString('utf8')) } catch { return { entrypoint: [], cmd: [], env: [] } }
  const c = doc?.config ?? {}
  return { entrypoint: strings(c.Entrypoint), cmd: strings(c.Cmd), env: strings(c.Env), workingDir: typeof c.WorkingDir === 'string' && c.WorkingDir !== '' ? c.WorkingDir : undefined }
}
