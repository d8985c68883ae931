import t from 'tap'
import { mkdtempSync, writeFileSync, existsSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { compileFixture } from '../runtime/wasm/fixtures/compile.js'
import { pack } from './pack.js'

const dir = mkdtempSync(join(tmpdir(), 'orchlet-pack-'))
const io = (): { out: string[], err: string[], stdout(t: string): void, stderr(t: string): void } => {
  const o = { out: [] as string[], err: [] as string[], stdout (t: string) { o.out.push(t) }, stderr (t: string) { o.err.push(t) } }
  return o
}

t.test('packs a module into an importable layout archive', async t => {
  const module = join(dir, 'tool.wasm')
  writeFileSync(module, await compileFixture('tool'))
  const out = join(dir, 'tool.tar')
  const r = io()
  t.equal(pack([module, '--name', 'localhost/tool:3', '--output', out, '--', 'tool', 'echo', 'hi'], r), 0)
  t.ok(existsSync(out))
  t.same(r.out, [`${out}: localhost/tool:3\n`])
})

t.test('refuses what is not a WebAssembly module, a bad reference, or missing arguments', async t => {
  const text = join(dir, 'x.wasm')
  writeFileSync(text, 'not wasm at all')
  const r = io()
  t.equal(pack([text, '--name', 'localhost/x:1'], r), 1)
  t.match(r.err.join(''), 'is not a WebAssembly binary module')
  t.equal(pack([text, '--name', 'UPPER CASE'], io()), 2)
  t.equal(pack([text], io()), 2)
})
