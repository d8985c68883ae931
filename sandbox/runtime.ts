// The QuickJS runtime a sandbox runs in: capped WebAssembly memory, a stack limit, a deadline, one JSON crossing.
//
// Evidence behind the choices (measured on this machine kind, see README.md):
// - QuickJS's setMemoryLimit is not enforced by the emscripten build, so each sandbox instantiates its own
//   module variant over a WebAssembly.Memory with a `maximum`: allocation past it fails inside the guest
//   (InternalError: out of memory) and the context stays usable.
// - The interrupt handler fires about every 10k bytecode operations (also inside the regex engine), so the
//   deadline is checked there; setMaxStackSize turns deep recursion into a guest error instead of a crash.
// - A crossing costs microseconds and JSON inside QuickJS about 10 µs per 300 bytes, so every operation is one
//   call, with one JSON string each way or, on the hot evaluation path, plain number arguments.

import { existsSync, readFileSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { createRequire } from 'node:module'
import { newQuickJSWASMModuleFromVariant, newVariant, RELEASE_SYNC } from 'quickjs-emscripten'
import type { QuickJSContext, QuickJSHandle, QuickJSRuntime } from 'quickjs-emscripten'
import { SandboxError } from './errors.js'

/**
 * The guest modules are plain .js files that tsc does not copy: from the source tree they sit beside this
 * file; from the build (dist/sandbox/runtime.js) they are read from the source tree (../../sandbox/guest).
 */
const HERE = dirname(fileURLToPath(import.meta.url))
const GUEST_DIR = [resolve(HERE, 'guest'), resolve(HERE, '../../sandbox/guest')].find((d) => existsSync(resolve(d, 'main.js'))) ?? resolve(HERE, 'guest')
const WASM_PAGE = 64 * 1024
/** The CEL library's own source directory; guest modules import it as `cel-lib/<file>.js`. */
const CEL_LIB_DIR = dirname(createRequire(import.meta.url).resolve('@marcbachmann/cel-js'))
/** re2js's ES module build (its package exports only the CommonJS file to `require`); guest modules import `re2js`. */
const RE2JS_ESM = resolve(dirname(createRequire(import.meta.url).resolve('re2js')), 'index.js')

export interface RuntimeLimits {
  memoryBytes: number
  stackBytes: number
  deadlineMs: number
}

export interface GuestRuntime {
  /** Calls `__orch[fn](JSON.stringify(request))` in the guest and parses the JSON answer. */
  call<T>(fn: string, request: unknown, deadlineMs?: number): T
  /** The same with the request already serialized (callers that splice pre-serialized parts). */
  callJson<T>(fn: string, json: string, deadlineMs?: number): T
  /**
   * Calls `__orch[fn](...args)` with numbers and strings as separate arguments and parses the JSON answer: no
   * request JSON to build on the host or parse in the guest (the hot evaluation path).
   */
  callArgs<T>(fn: string, args: ReadonlyArray<number | string>, deadlineMs?: number): T
  /** Bytes of WebAssembly memory currently reserved by the guest. */
  memoryBytes(): number
  /** False once disposed, or closed after a trap inside the WebAssembly instance. */
  alive(): boolean
  dispose(): void
}

/** Host functions the guest may call synchronously (the authorizer's decision function). */
export interface HostFunctions {
  authorize?: (request: unknown) => unknown
}

export async function createGuestRuntime(limits: RuntimeLimits, host: HostFunctions, now: () => number): Promise<GuestRuntime> {
  const maximum = Math.max(64, Math.ceil(limits.memoryBytes / WASM_PAGE))
  const memory = new WebAssembly.Memory({ initial: Math.min(256, maximum), maximum })
  const mod = await newQuickJSWASMModuleFromVariant(newVariant(RELEASE_SYNC, { wasmMemory: memory }))
  const rt = mod.newRuntime()
  rt.setMaxStackSize(limits.stackBytes)
  let deadline = Infinity
  rt.setInterruptHandler(() => now() > deadline)
  rt.setModuleLoader(
    (name) => readFileSync(name, 'utf8'),
    (base, request) => {
      if (request === 're2js') return RE2JS_ESM
      return request.startsWith('cel-lib/') ? resolve(CEL_LIB_DIR, request.slice(8)) : resolve(dirname(base), request)
    },
  )
  const ctx = rt.newContext()
  try {
    installPolyfills(ctx, host)
    deadline = now() + 10_000
    const loaded = ctx.evalCode(`import './main.js'`, resolve(GUEST_DIR, 'entry.js'), { type: 'module' })
    if (loaded.error) {
      const detail = ctx.dump(loaded.error)
      loaded.error.dispose()
      throw new SandboxError('SANDBOX_ERR_INTERNAL', `guest failed to load: ${JSON.stringify(detail)}`)
    }
    loaded.value.dispose()
  } finally {
    deadline = Infinity
  }
  const api = ctx.getProp(ctx.global, '__orch')
  const fns = new Map<string, QuickJSHandle>()
  let alive = true

  function call<T>(fn: string, request: unknown, deadlineMs = limits.deadlineMs): T {
    return callJson<T>(fn, toJson(request), deadlineMs)
  }

  function callJson<T>(fn: string, json: string, deadlineMs = limits.deadlineMs): T {
    return callArgs<T>(fn, [json], deadlineMs)
  }

  function callArgs<T>(fn: string, values: ReadonlyArray<number | string>, deadlineMs = limits.deadlineMs): T {
    if (!alive) throw new SandboxError('SANDBOX_ERR_INTERNAL', 'sandbox is disposed')
    let handle = fns.get(fn)
    if (!handle) fns.set(fn, (handle = ctx.getProp(api, fn)))
    // Copying the request into the guest heap must not be what exhausts it: an allocation that fails
    // there traps the WebAssembly instance instead of raising a guest error.
    let chars = 0
    for (const v of values) if (typeof v === 'string') chars += v.length
    if (chars * 3 > limits.memoryBytes / 2) {
      throw new SandboxError('SANDBOX_ERR_MEMORY', `request of ${chars} characters does not fit the sandbox memory cap`)
    }
    const args = values.map((v) => (typeof v === 'string' ? ctx.newString(v) : ctx.newNumber(v)))
    deadline = now() + deadlineMs
    let result
    try {
      result = ctx.callFunction(handle, ctx.undefined, ...args)
    } catch (err) {
      // A trap inside the WebAssembly instance leaves QuickJS in an unknown state: stop using it.
      alive = false
      throw new SandboxError('SANDBOX_ERR_INTERNAL', `sandbox runtime failed and was closed: ${(err as Error).message}`)
    } finally {
      deadline = Infinity
      for (const a of args) a.dispose()
    }
    if (result.error) throw classify(ctx, rt, result.error)
    const out = ctx.getString(result.value)
    result.value.dispose()
    return JSON.parse(out) as T
  }

  return {
    call,
    callJson,
    callArgs,
    memoryBytes: () => memory.buffer.byteLength,
    alive: () => alive,
    dispose() {
      if (!alive) return
      alive = false
      for (const h of fns.values()) h.dispose()
      api.dispose()
      ctx.dispose()
      rt.dispose()
    },
  }
}

/** JSON text of a request or of variables; what cannot be serialized is an input error. */
export function toJson(value: unknown): string {
  try {
    return JSON.stringify(value)
  } catch (err) {
    throw new SandboxError('SANDBOX_ERR_INPUT', `variables are not JSON-serializable: ${(err as Error).message}`)
  }
}

/** Maps a guest exception that escaped the CEL layer to a sandbox error (limits, or our own bug). */
function classify(ctx: QuickJSContext, rt: QuickJSRuntime, handle: QuickJSHandle): SandboxError {
  let detail: unknown
  try {
    detail = ctx.dump(handle)
  } finally {
    handle.dispose()
  }
  const message = typeof detail === 'object' && detail !== null ? String((detail as { message?: unknown }).message ?? '') : String(detail)
  void rt
  if (detail === null || /out of memory/i.test(message)) return new SandboxError('SANDBOX_ERR_MEMORY', 'sandbox memory limit reached')
  // QuickJS's own size limits (a string past 2^30 characters, an array past 2^32 items) are memory bounds too.
  if (/string too long|invalid array length/i.test(message)) return new SandboxError('SANDBOX_ERR_MEMORY', `sandbox value size limit reached: ${message}`)
  if (/interrupted/i.test(message)) return new SandboxError('SANDBOX_ERR_DEADLINE', 'evaluation deadline exceeded')
  if (/stack overflow|call stack/i.test(message)) return new SandboxError('SANDBOX_ERR_STACK', 'sandbox stack limit reached')
  return new SandboxError('SANDBOX_ERR_INTERNAL', `guest error: ${message}`)
}

/** What QuickJS lacks and the CEL library needs (TextEncoder/TextDecoder), plus the host's authorizer. */
function installPolyfills(ctx: QuickJSContext, host: HostFunctions): void {
  const src = `
globalThis.TextEncoder = class TextEncoder {
  encode(s) { const b = unescape(encodeURIComponent(s)); const a = new Uint8Array(b.length); for (let i = 0; i < b.length; i++) a[i] = b.charCodeAt(i); return a }
}
globalThis.TextDecoder = class TextDecoder {
  constructor(label, opts) { this.fatal = Boolean(opts && opts.fatal) }
  decode(bytes) {
    let s = ''
    for (let i = 0; i < bytes.length; i += 4096) s += String.fromCharCode.apply(null, bytes.subarray(i, i + 4096))
    try { return decodeURIComponent(escape(s)) } catch (e) { if (this.fatal) throw new TypeError('invalid utf-8'); return s }
  }
}`
  const r = ctx.evalCode(src, 'polyfills.js')
  if (r.error) {
    r.error.dispose()
    throw new SandboxError('SANDBOX_ERR_INTERNAL', 'polyfills failed')
  }
  r.value.dispose()
  const authorize = ctx.newFunction('__hostAuthorize', (reqHandle) => {
    const req = JSON.parse(ctx.getString(reqHandle))
    const decision = host.authorize ? host.authorize(req) : { decision: 'deny', reason: 'no authorizer configured' }
    return ctx.newString(JSON.stringify(decision))
  })
  ctx.setProp(ctx.global, '__hostAuthorize', authorize)
  authorize.dispose()
}

export const GUEST_SOURCE_DIR = GUEST_DIR
