// The wasm runtime against the shared runtime conformance suite (images served by a real test registry).
import t from 'tap'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { runRuntimeConformance } from '../conformance.js'
import { buildWasmImageLayout, writeLayoutDir } from '../oci/layout-writer.js'
import { startTestRegistry } from '../oci/test-registry.js'
import { compileFixture } from './fixtures/compile.js'
import { createWasmRuntime } from './runtime.js'
import type { WasmRuntime } from './runtime.js'

const dir = await mkdtemp(join(tmpdir(), 'orch-wasm-conf-'))
const tool = await compileFixture('tool')
const layoutDir = join(dir, 'layout')
await writeLayoutDir(layoutDir, buildWasmImageLayout({ module: tool, refName: 'localhost/orch-test/tool:1' }))
const registry = await startTestRegistry()
registry.addRepository('orch-test/pulled', 'v1', buildWasmImageLayout({ module: tool, layer: 'tar+gzip' }))
t.teardown(async () => { await registry.close(); await rm(dir, { recursive: true, force: true }) })

const cmd = (...argv: string[]): { command: string[]; args: string[] } => ({ command: ['tool', argv[0]], args: argv.slice(1) })

await runRuntimeConformance(t, {
  newRuntime: async () => await createWasmRuntime({ rootDir: join(dir, 'root') }),
  fixtures: {
    image: 'localhost/orch-test/tool:1',
    ensureImage: async rt => { await (rt as WasmRuntime).images.importImage(layoutDir) },
    missingImage: `${registry.host}/orch-test/absent:1`,
    pullableImage: `${registry.host}/orch-test/pulled:v1`,
    runtimeHandler: 'wasm',
    commands: {
      printLines: lines => cmd('echo', ...lines),
      printStderr: line => cmd('stderr', line),
      exit: code => cmd('exit', String(code)),
      sleep: () => cmd('spin'),
      printEnv: name => cmd('env', name),
      readFile: path => cmd('cat', path)
    }
  }
})
