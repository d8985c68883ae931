// The memory.grow hook: instrumented modules validate, behave the same, and flag a refused grow.
import t from 'tap'
import { capModuleMemory, HOST_MEMORY_MODULE } from './binary.js'
import { instrumentMemoryGrow, OOM_EXPORT } from './grow-hook.js'
import { compileFixture, compileWat } from './fixtures/compile.js'

function instantiate (bytes: Uint8Array, maximum: number, imports: WebAssembly.Imports = {}): { exports: any; memory: WebAssembly.Memory } {
  const capped = capModuleMemory(bytes, maximum)
  const hooked = instrumentMemoryGrow(capped.bytes)
  if (!hooked) throw new Error('not instrumented')
  const memory = new WebAssembly.Memory({ initial: capped.memory?.initial ?? 1, maximum: capped.memory?.maximum })
  const inst = new WebAssembly.Instance(new WebAssembly.Module(hooked as Uint8Array<ArrayBuffer>), { ...imports, [HOST_MEMORY_MODULE]: { memory } })
  return { exports: inst.exports, memory }
}

t.test('flags a refused grow while still returning -1 to the module', async t => {
  const wat = `(module (memory 1 100)
    (func (export "grow") (param i32) (result i32) (memory.grow (local.get 0))))`
  const { exports } = instantiate(await compileWat(wat), 8)
  t.equal(exports[OOM_EXPORT].value, 0)
  t.equal(exports.grow(3), 1)
  t.equal(exports[OOM_EXPORT].value, 0, 'a successful grow does not set the flag')
  t.equal(exports.grow(100), -1)
  t.equal(exports[OOM_EXPORT].value, 1, 'a refused grow sets it')
  t.equal(exports.grow(1), 4, 'the module keeps running')
})

t.test('decodes every kind of immediate and leaves behaviour unchanged', async t => {
  const wat = `(module
    (type $t (func (param i32) (result i32)))
    (import "env" "log" (func $log (param i32)))
    (global $g (mut i64) (i64.const -5))
    (memory 1 10)
    (table 2 funcref)
    (elem (i32.const 0) $double $grow1)
    (data $d "abcd")
    (func $double (type $t) (i32.mul (local.get 0) (i32.const 2)))
    (func $grow1 (type $t) (memory.grow (local.get 0)))
    (func (export "run") (param $x i32) (result i32) (local $v v128) (local $f f64)
      (local.set $f (f64.const 1.5))
      (local.set $v (v128.const i32x4 1 2 3 4))
      (local.set $v (i8x16.shuffle 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 (local.get $v) (local.get $v)))
      (v128.store offset=16 (i32.const 0) (local.get $v))
      (memory.fill (i32.const 64) (i32.const 7) (i32.const 4))
      (memory.init $d (i32.const 100) (i32.const 0) (i32.const 4))
      (global.set $g (i64.add (global.get $g) (i64.const 1)))
      (block $a (block $b (br_table $a $b $a (local.get $x))))
      (call $log (i32x4.extract_lane 2 (local.get $v)))
      (call $log (select (result i32) (i32.const 1) (i32.const 2) (local.get $x)))
      (call $log (i32.trunc_sat_f64_s (local.get $f)))
      (call $log (i32.load8_u offset=3 (i32.const 100)))
      (call_indirect (type $t) (i32.const 21) (i32.const 0))
      (drop (call_indirect (type $t) (i32.const 1) (i32.const 1)))
      (i32.add (memory.size)))
    (func (export "hog") (result i32) (memory.grow (i32.const 50))))`
  const logged: number[] = []
  const { exports } = instantiate(await compileWat(wat), 10, { env: { log: (x: number) => { logged.push(x) } } })
  t.equal(exports.run(0), 42 + 2, 'call_indirect, memory.grow through the table, memory.size')
  t.same(logged, [3, 2, 1, 'd'.charCodeAt(0)])
  t.equal(exports[OOM_EXPORT].value, 0)
  t.equal(exports.hog(), -1)
  t.equal(exports[OOM_EXPORT].value, 1)
})

t.test('instruments the WASI fixtures and skips modules without memory.grow', async t => {
  const tool = capModuleMemory(await compileFixture('tool'), 16)
  const hooked = instrumentMemoryGrow(tool.bytes)
  t.ok(hooked && WebAssembly.validate(hooked as Uint8Array<ArrayBuffer>), 'tool validates after instrumenting')
  t.equal(instrumentMemoryGrow(await compileWat('(module (memory 1) (func (export "f")))')), undefined)
})

t.test('adds the type, function, global and export sections a module lacks', async t => {
  const bytes = await compileWat('(module (memory 1 4) (func (drop (memory.grow (i32.const 9)))) (start 0))')
  const capped = capModuleMemory(bytes, 4)
  const hooked = instrumentMemoryGrow(capped.bytes) as Uint8Array
  const memory = new WebAssembly.Memory({ initial: 1, maximum: 4 })
  const inst = new WebAssembly.Instance(new WebAssembly.Module(hooked as Uint8Array<ArrayBuffer>), { [HOST_MEMORY_MODULE]: { memory } })
  t.equal((inst.exports[OOM_EXPORT] as WebAssembly.Global).value, 1, 'the start function\'s refused grow is flagged')
})
