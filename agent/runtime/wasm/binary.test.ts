// Memory capping by binary rewrite: the rewritten module validates, imports a capped memory, keeps its exports.
import t from 'tap'
import { capModuleMemory, parseSections, writeU32, HOST_MEMORY_MODULE } from './binary.js'
import { compileWat } from './fixtures/compile.js'

const imports = (bytes: Uint8Array): WebAssembly.ModuleImportDescriptor[] => WebAssembly.Module.imports(new WebAssembly.Module(bytes as Uint8Array<ArrayBuffer>))

t.test('turns a defined memory into a capped import and keeps function imports and exports working', async t => {
  const wat = `(module
    (import "env" "f" (func $f (param i32) (result i32)))
    (memory (export "mem") 1 16384)
    (data (i32.const 0) "hi")
    (func (export "run") (result i32) (call $f (i32.load8_u (i32.const 1))))
    (func (export "grow") (param i32) (result i32) (memory.grow (local.get 0))))`
  const capped = capModuleMemory(await compileWat(wat), 4)
  t.same(capped.memory, { module: HOST_MEMORY_MODULE, name: 'memory', initial: 1, maximum: 4, shared: false })
  t.same(imports(capped.bytes).map(i => `${i.module}.${i.name}:${i.kind}`), ['env.f:function', `${HOST_MEMORY_MODULE}.memory:memory`])
  const memory = new WebAssembly.Memory({ initial: 1, maximum: 4 })
  const inst = new WebAssembly.Instance(new WebAssembly.Module(capped.bytes as Uint8Array<ArrayBuffer>), { env: { f: (x: number) => x + 1 }, [HOST_MEMORY_MODULE]: { memory } })
  const ex = inst.exports as { run: () => number; grow: (n: number) => number; mem: WebAssembly.Memory }
  t.equal(ex.run(), 'i'.charCodeAt(0) + 1, 'data segments land in the supplied memory')
  t.equal(ex.mem, memory, 'the export is the host memory')
  t.equal(ex.grow(3), 1, 'growing up to the cap works')
  t.equal(ex.grow(1), -1, 'growing past the cap fails')
})

t.test('caps a module without a declared maximum and a module importing its memory', async t => {
  const none = capModuleMemory(await compileWat('(module (memory 2))'), 100)
  t.equal(none.memory?.maximum, 100)
  t.same(imports(none.bytes).map(i => i.kind), ['memory'])
  const imported = await compileWat('(module (import "env" "memory" (memory 1 65536)))')
  const c = capModuleMemory(imported, 10)
  t.equal(c.bytes, imported, 'an imported memory needs no rewrite')
  t.same(c.memory, { module: 'env', name: 'memory', initial: 1, maximum: 10, shared: false })
  const small = capModuleMemory(await compileWat('(module (memory 1 3))'), 10)
  t.equal(small.memory?.maximum, 3, 'a declared maximum below the cap is kept')
})

t.test('leaves modules without memory alone', async t => {
  const bytes = await compileWat('(module (func (export "_start")))')
  t.same(capModuleMemory(bytes, 10), { bytes })
})

t.test('rejects initial memory above the cap, malformed and unsupported modules with codes', async t => {
  t.throws(() => capModuleMemory(Buffer.from(compileWatSync64()), 10), { code: 'WASM_ERR_UNSUPPORTED' })
  const twenty = await compileWat('(module (memory 20))')
  t.throws(() => capModuleMemory(twenty, 10), { code: 'WASM_ERR_MEMORY_LIMIT' })
  t.throws(() => capModuleMemory(Buffer.from('not wasm'), 10), { code: 'WASM_ERR_MALFORMED' })
  t.throws(() => capModuleMemory(Buffer.from('\0asm\x01\0\0\0\x05\x09\x01', 'latin1'), 10), { code: 'WASM_ERR_MALFORMED' })
  t.throws(() => capModuleMemory(Buffer.from('\0asm\x01\0\0\0\x05\x02\x01\x00', 'latin1'), 10), { code: 'WASM_ERR_MALFORMED' })
  t.throws(() => capModuleMemory(Buffer.from('\0asm\x0d\0\x01\0', 'latin1'), 10), { code: 'WASM_ERR_UNSUPPORTED' }, 'components are not core modules')
})

t.test('LEB128 encodes as the spec says and sections parse past padded sizes', async t => {
  t.same(writeU32(0), [0])
  t.same(writeU32(127), [0x7f])
  t.same(writeU32(128), [0x80, 0x01])
  t.same(writeU32(624485), [0xe5, 0x8e, 0x26])
  // a memory section whose size is written in padded (5-byte) LEB128
  const padded = Buffer.from([0, 0x61, 0x73, 0x6d, 1, 0, 0, 0, 5, 0x83, 0x80, 0x80, 0x80, 0x00, 0x01, 0x00, 0x01])
  t.same(parseSections(padded).map(s => [s.id, s.end - s.start]), [[5, 3]])
  const capped = capModuleMemory(padded, 8)
  t.same(imports(capped.bytes).map(i => i.kind), ['memory'])
})

/** A memory64 memory section (flags 0x04), written by hand: wabt needs a feature flag for it. */
function compileWatSync64 (): number[] {
  return [0, 0x61, 0x73, 0x6d, 1, 0, 0, 0, 5, 3, 1, 0x04, 1]
}
