// `orchlet pack MODULE.wasm --name REF [--output FILE] [-- ARGS...]`: wraps a WebAssembly module into an OCI image
// layout archive that the import folder (ROOT_DIR/wasm/import/) takes, for boxes without a registry.

import { readFileSync, writeFileSync } from 'node:fs'
import { basename } from 'node:path'
import { buildWasmImageLayout, layoutTar } from '../runtime/oci/layout-writer.js'
import { parseReference } from '../runtime/oci/reference.js'

export const PACK_USAGE = `Usage: orchlet pack MODULE.wasm --name REFERENCE [--output FILE.tar] [-- ARG...]

Wraps a WASI module into an OCI image layout (.tar). Drop the file in the orchlet's wasm import folder
(.orch/orchlet/wasm/import/ under orch up) and use REFERENCE as a container image. ARGs become the image's
default command (what a pod runs when it names none).
`

/** Returns the exit code; writes the archive (default: <module name>.tar). */
export function pack (argv: string[], io: { stdout(t: string): void, stderr(t: string): void }): number {
  let name: string | undefined
  let output: string | undefined
  let module: string | undefined
  let cmd: string[] = []
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]
    if (a === '--') { cmd = argv.slice(i + 1); break }
    if (a === '--help' || a === '-h') { io.stdout(PACK_USAGE); return 0 }
    if (a === '--name' || a === '--output') {
      const v = argv[++i]
      if (v === undefined) { io.stderr(`orchlet pack: ${a} needs a value\n${PACK_USAGE}`); return 2 }
      if (a === '--name') name = v
      else output = v
      continue
    }
    if (a.startsWith('--name=')) { name = a.slice(7); continue }
    if (a.startsWith('--output=')) { output = a.slice(9); continue }
    if (a.startsWith('-')) { io.stderr(`orchlet pack: unknown flag ${a}\n${PACK_USAGE}`); return 2 }
    if (module !== undefined) { io.stderr(`orchlet pack: one module only (got ${module} and ${a})\n`); return 2 }
    module = a
  }
  if (module === undefined || name === undefined) { io.stderr(`orchlet pack: a module and --name are required\n${PACK_USAGE}`); return 2 }
  try { parseReference(name) } catch (err) { io.stderr(`orchlet pack: --name ${JSON.stringify(name)}: ${(err as Error).message}\n`); return 2 }
  let bytes: Buffer
  try { bytes = readFileSync(module) } catch (err) { io.stderr(`orchlet pack: ${(err as Error).message}\n`); return 1 }
  // "\0asm": every WebAssembly binary starts with this magic number.
  if (bytes.length < 8 || bytes.readUInt32BE(0) !== 0x0061736d) { io.stderr(`orchlet pack: ${module} is not a WebAssembly binary module\n`); return 1 }
  const out = output ?? `${basename(module).replace(/\.wasm$/, '')}.tar`
  writeFileSync(out, layoutTar(buildWasmImageLayout({ module: bytes, refName: name, cmd })))
  io.stdout(`${out}: ${name}\n`)
  return 0
}
