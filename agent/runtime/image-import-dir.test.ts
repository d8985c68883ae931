import t from 'tap'
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createWasmRuntime } from './wasm/runtime.js'
import { compileFixture } from './wasm/fixtures/compile.js'
import { buildWasmImageLayout, layoutTar } from './oci/layout-writer.js'
import { watchImportDir } from './image-import-dir.js'

t.test('imports OCI archives dropped in the folder, once, and reports a broken one', async t => {
  const root = mkdtempSync(join(tmpdir(), 'orch-import-'))
  const wasm = await createWasmRuntime({ rootDir: join(root, 'wasm') })
  t.teardown(async () => { await wasm.close(); rmSync(root, { recursive: true, force: true }) })
  const drop = join(root, 'drop')
  mkdirSync(drop)
  writeFileSync(join(drop, 'tool.tar'), layoutTar(buildWasmImageLayout({ module: await compileFixture('tool'), refName: 'localhost/appliance/tool:1' })))
  writeFileSync(join(drop, 'broken.tar'), 'not a tar')
  writeFileSync(join(drop, 'notes.txt'), 'ignored')
  const warnings: string[] = []
  let imports = 0
  const importer = { importImage: async (p: string) => { imports++; return await wasm.images.importImage(p) } }
  const dir = watchImportDir({ dir: drop, importer, checkFrequencyMs: 60_000, logger: { info () {}, warn (o: object) { warnings.push(JSON.stringify(o)) } } })
  t.teardown(() => dir.stop())
  await dir.scan()
  const img = await wasm.images.imageStatus({ image: 'localhost/appliance/tool:1' })
  t.ok(img, 'the image is in the store')
  t.match(warnings.join('\n'), /broken\.tar/)
  await dir.scan()
  t.equal(imports, 2, 'unchanged files are not imported again')
})

t.test('an import that fails for lack of space is reported once and tried again when space is back', async t => {
  const root = mkdtempSync(join(tmpdir(), 'orch-import-full-'))
  t.teardown(() => rmSync(root, { recursive: true, force: true }))
  writeFileSync(join(root, 'img.tar'), 'x')
  let full = true
  let attempts = 0
  const failures: string[] = []
  const importer = {
    importImage: async () => {
      attempts++
      if (full) throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' })
      return [{ id: 'sha256:1', repoTags: ['localhost/x:1'], repoDigests: [], size: 1 }]
    }
  }
  const dir = watchImportDir({ dir: root, importer, checkFrequencyMs: 60_000, logger: { info () {}, warn () {} }, onFailure: (_p, m) => failures.push(m) })
  t.teardown(() => dir.stop())
  await dir.scan()
  await dir.scan()
  t.equal(attempts, 2, 'retried at the next scan')
  t.same(failures, [`importing ${join(root, 'img.tar')}: no space left on device`], 'reported once')
  full = false
  await dir.scan()
  t.equal(attempts, 3)
  await dir.scan()
  t.equal(attempts, 3, 'imported: not again')
})
