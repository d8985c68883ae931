// Builds an OCI image layout holding one wasm module (as a wasm layer or a tar+gzip layer), as a directory
// or a tar archive: for offline appliances and for the tests of the pull and import paths.
import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { gzipSync } from 'node:zlib'
import { sha256Digest } from './digest.js'
import { MEDIA } from './manifest.js'
import type { Descriptor } from './manifest.js'
import { writeTar } from './tar.js'

export interface WasmImageSpec {
  module: Uint8Array
  /** `wasm` (application/vnd.wasm.content.layer.v1+wasm, the default) or `tar+gzip` (module at /app.wasm). */
  layer?: 'wasm' | 'module-wasm' | 'tar+gzip'
  /** Written as `org.opencontainers.image.ref.name` (a tag, or a full reference). */
  refName?: string
  entrypoint?: string[]
  cmd?: string[]
  env?: string[]
}

export interface BuiltLayout {
  /** Layout-relative path -> bytes. */
  files: Map<string, Buffer>
  manifestDigest: string
  configDigest: string
  moduleLayerDigest: string
}

export function buildWasmImageLayout (spec: WasmImageSpec): BuiltLayout {
  const files = new Map<string, Buffer>()
  const add = (mediaType: string, bytes: Buffer, extra?: Partial<Descriptor>): Descriptor => {
    const digest = sha256Digest(bytes)
    files.set(`blobs/sha256/${digest.slice(7)}`, bytes)
    return { mediaType, digest, size: bytes.length, ...extra }
  }
  const kind = spec.layer ?? 'wasm'
  const entrypoint = spec.entrypoint ?? (kind === 'tar+gzip' ? ['/app.wasm'] : [])
  const config = Buffer.from(JSON.stringify({
    architecture: 'wasm', os: 'wasip1', config: { Entrypoint: entrypoint, Cmd: spec.cmd ?? [], Env: spec.env ?? [] }, rootfs: { type: 'layers', diff_ids: [] }
  }))
  const configDesc = add(MEDIA.ociConfig, config)
  const layer = kind === 'tar+gzip'
    ? add(MEDIA.ociLayerTarGzip, gzipSync(writeTar([{ name: 'app.wasm', data: spec.module }])))
    : add(kind === 'wasm' ? MEDIA.wasmLayer : MEDIA.wasmModuleLayer, Buffer.from(spec.module))
  const manifest = Buffer.from(JSON.stringify({ schemaVersion: 2, mediaType: MEDIA.ociManifest, config: configDesc, layers: [layer] }))
  const manifestDesc = add(MEDIA.ociManifest, manifest, {
    platform: { os: 'wasip1', architecture: 'wasm' },
    ...(spec.refName !== undefined ? { annotations: { 'org.opencontainers.image.ref.name': spec.refName } } : {})
  })
  files.set('oci-layout', Buffer.from(JSON.stringify({ imageLayoutVersion: '1.0.0' })))
  files.set('index.json', Buffer.from(JSON.stringify({ schemaVersion: 2, mediaType: MEDIA.ociIndex, manifests: [manifestDesc] })))
  return { files, manifestDigest: manifestDesc.digest, configDigest: configDesc.digest, moduleLayerDigest: layer.digest }
}

export async function writeLayoutDir (dir: string, layout: BuiltLayout): Promise<void> {
  await mkdir(join(dir, 'blobs', 'sha256'), { recursive: true })
  for (const [name, bytes] of layout.files) await writeFile(join(dir, name), bytes)
}

export function layoutTar (layout: BuiltLayout): Buffer {
  return writeTar([...layout.files].map(([name, data]) => ({ name, data })))
}
