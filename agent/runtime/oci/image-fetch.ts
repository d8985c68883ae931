// Turns an OCI image from any blob source (a registry, an image layout) into a stored wasm image: manifest
// (through an index if needed), config and the module, every blob verified against its digest.
import { posix } from 'node:path'
import { OciError } from './errors.js'
import { isDigest, sha256Digest, verifyDigest } from './digest.js'
import { choosePlatformManifest, parseImageConfig, parseManifestOrIndex, TAR_LAYER_TYPES, WASM_LAYER_TYPES } from './manifest.js'
import type { Descriptor, ImageConfig, Manifest } from './manifest.js'
import { cleanTarPath, readTar } from './tar.js'
import type { ImageRecord, ImageStore } from './store.js'

export interface BlobSource {
  /** A manifest or index by tag or digest; `mediaType` is the Content-Type where the source has one. */
  manifest: (reference: string) => Promise<{ bytes: Buffer; mediaType?: string; digest?: string }>
  blob: (descriptor: Descriptor) => Promise<Buffer>
}

async function verifiedBlob (source: BlobSource, d: Descriptor, what: string): Promise<Buffer> {
  const bytes = await source.blob(d)
  if (bytes.length !== d.size) throw new OciError('OCI_ERR_DIGEST_MISMATCH', `${what} ${d.digest}: size ${bytes.length}, descriptor says ${d.size}`)
  verifyDigest(bytes, d.digest, what)
  return bytes
}

async function resolveManifest (source: BlobSource, reference: string): Promise<{ manifest: Manifest; bytes: Buffer; digest: string }> {
  const first = await source.manifest(reference)
  const firstDigest = sha256Digest(first.bytes)
  if (isDigest(reference)) verifyDigest(first.bytes, reference, 'manifest')
  else if (first.digest !== undefined && first.digest !== firstDigest) {
    throw new OciError('OCI_ERR_DIGEST_MISMATCH', `manifest digest mismatch: registry says ${first.digest}, content is ${firstDigest}`)
  }
  const doc = parseManifestOrIndex(first.bytes, first.mediaType)
  if (doc.kind === 'manifest') return { manifest: doc, bytes: first.bytes, digest: firstDigest }
  const chosen = choosePlatformManifest(doc)
  const second = await source.manifest(chosen.digest)
  verifyDigest(second.bytes, chosen.digest, 'manifest')
  const inner = parseManifestOrIndex(second.bytes, second.mediaType ?? chosen.mediaType)
  if (inner.kind !== 'manifest') throw new OciError('OCI_ERR_UNSUPPORTED', 'nested image indexes are not supported')
  return { manifest: inner, bytes: second.bytes, digest: chosen.digest }
}

/** The module from tar layers: the config's entrypoint if it names a file there, else the only `*.wasm`. */
async function moduleFromTarLayers (source: BlobSource, layers: Descriptor[], config: ImageConfig): Promise<Buffer> {
  const files = new Map<string, Buffer>()
  for (const layer of layers) {
    for (const e of readTar(await verifiedBlob(source, layer, 'layer'))) if (e.type === 'file') files.set(e.name, e.data)
  }
  const entry = config.entrypoint[0] ?? config.cmd[0]
  if (entry !== undefined) {
    const found = files.get(cleanTarPath(posix.normalize(entry)))
    if (found) return found
  }
  const wasm = [...files.keys()].filter(n => n.endsWith('.wasm'))
  if (wasm.length === 1) return files.get(wasm[0]) as Buffer
  throw new OciError('OCI_ERR_UNSUPPORTED', wasm.length === 0
    ? 'image layers hold no .wasm module'
    : `image layers hold several .wasm modules (${wasm.join(', ')}) and the config's entrypoint names none of them`)
}

/** Fetch, verify and store the image `reference` (tag or digest) of `source`; `ref` is recorded as its name. */
export async function fetchWasmImage (source: BlobSource, reference: string, store: ImageStore, ref?: string): Promise<ImageRecord> {
  const { manifest, bytes: manifestBytes, digest: manifestDigest } = await resolveManifest(source, reference)
  const configBytes = await verifiedBlob(source, manifest.config, 'config')
  const config = parseImageConfig(configBytes)
  const wasmLayer = manifest.layers.find(l => WASM_LAYER_TYPES.includes(l.mediaType))
  let module: Buffer
  if (wasmLayer) module = await verifiedBlob(source, wasmLayer, 'layer')
  else {
    const tarLayers = manifest.layers.filter(l => TAR_LAYER_TYPES.includes(l.mediaType))
    if (tarLayers.length === 0) throw new OciError('OCI_ERR_UNSUPPORTED', `no wasm or tar layer in manifest (layer types: ${manifest.layers.map(l => l.mediaType).join(', ') || 'none'})`)
    module = await moduleFromTarLayers(source, tarLayers, config)
  }
  if (module.length < 8 || module.readUInt32BE(0) !== 0x0061736d) throw new OciError('OCI_ERR_BAD_CONTENT', 'the image\'s module is not a WebAssembly binary')
  const moduleDigest = sha256Digest(module)
  await store.putBlob(manifestDigest, manifestBytes)
  await store.putBlob(manifest.config.digest, configBytes)
  await store.putBlob(moduleDigest, module)
  return await store.addImage({
    id: manifest.config.digest,
    manifestDigest,
    size: module.length + configBytes.length + manifestBytes.length,
    moduleDigest,
    config
  }, ref)
}
