// Test fixtures of the registry: a real LMDB store in a temp dir, a registry on it, request contexts, sinks.

import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pino } from 'pino'
import { openLmdbStore } from '../storage/lmdb/index.js'
import { StorageError, type Store, type WatchCallbacks, type WatchHandle } from '../storage/store.js'
import type { StatusError } from '../errors/status-error.js'
import type { ApiWatchEvent, DecodedObject, FieldValidation, RequestContext, WatchEncoder, WatchSink } from './types.js'
import { createRegistry, type OrchRegistry, type RegistryOptions } from './registry.js'
import { selectorIndexer } from './selector-index.js'

export const silentLogger = pino({ level: 'silent' })

export interface Fixture { store: Store, registry: OrchRegistry, close(): Promise<void> }

/** A store in a fresh temp dir (indexed as the API server's, unless `unindexed`) and a started registry on it; `close` undoes both. */
export async function openFixture (fixtureOpts: Partial<RegistryOptions> & { retentionMs?: number, unindexed?: boolean, tap?: StoreTap } = {}): Promise<Fixture> {
  const { tap, ...opts } = fixtureOpts
  const dir = mkdtempSync(join(tmpdir(), 'orch-registry-'))
  const opened = await openLmdbStore({ path: dir, retentionMs: opts.retentionMs, indexer: opts.unindexed === true ? undefined : selectorIndexer })
  const store = tap?.wrap(opened) ?? opened
  const registry = createRegistry({ store, logger: silentLogger, revisionWaitMs: 200, controllerRetryMs: 20, ...opts })
  await registry.start()
  return {
    store,
    registry,
    async close () {
      await registry.stop()
      await store.close()
      rmSync(dir, { recursive: true, force: true })
    }
  }
}

export function ctx (fieldValidation: FieldValidation = 'Strict', dryRun = false): RequestContext {
  return { user: { username: 'tester', groups: [] }, dryRun, fieldValidation, warnings: [] }
}

export function body (object: Record<string, unknown>, duplicateFields: string[] = []): DecodedObject {
  return { object: structuredClone(object), duplicateFields }
}

export const jsonEncoder: WatchEncoder = {
  key: 'json',
  encode: (ev: ApiWatchEvent) => Buffer.concat([Buffer.from(`{"type":"${ev.type}","object":`), ev.raw, Buffer.from('}\n')])
}

/** A sink recording every write and the end. */
export class RecordingSink implements WatchSink {
  writes: Buffer[][] = []
  ended = false
  error?: StatusError
  private waiters: Array<() => void> = []

  write (chunks: Buffer[]): void { this.writes.push(chunks); this.wake() }
  end (err?: StatusError): void { this.ended = true; this.error = err; this.wake() }

  get chunks (): Buffer[] { return this.writes.flat() }
  events (): Array<{ type: string, object: Record<string, any> }> {
    return this.chunks.map(c => JSON.parse(c.toString()))
  }

  /** Resolves once at least `n` events were written (or the watch ended); rejects after `ms`. */
  async waitFor (n: number, ms = 3000): Promise<void> {
    const deadline = Date.now() + ms
    while (this.chunks.length < n && !this.ended) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${n} events, have ${this.chunks.length}`)
      await new Promise<void>(resolve => { this.waiters.push(resolve); setTimeout(resolve, 50) })
    }
  }

  private wake (): void { const w = this.waiters; this.waiters = []; for (const f of w) f() }
}

/** Polls `check` until it returns true (or throws after `ms`). */
export async function eventually (check: () => Promise<boolean> | boolean, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time')
    await new Promise(resolve => setTimeout(resolve, 10))
  }
}

/**
 * Passes a real store through, recording the watches and lists started on it and refusing lists as `failing` says, so a
 * test can end a component's watch as the store would (a slow watcher dropped) and see what it does next.
 */
export class StoreTap {
  readonly watches: Array<{ prefix: string, handle: WatchHandle, callbacks: WatchCallbacks }> = []
  /** Lists still to refuse, per prefix. */
  readonly failing = new Map<string, number>()
  /** Lists asked for, per prefix. */
  readonly lists = new Map<string, number>()

  wrap (store: Store): Store {
    return new Proxy(store, {
      get: (target, prop) => {
        if (prop === 'watch') {
          return (prefix: string, rev: number, callbacks: WatchCallbacks): WatchHandle => {
            const handle = target.watch(prefix, rev, callbacks)
            this.watches.push({ prefix, handle, callbacks })
            return handle
          }
        }
        if (prop === 'list') {
          return async (...args: Parameters<Store['list']>) => {
            const prefix = args[0]
            this.lists.set(prefix, (this.lists.get(prefix) ?? 0) + 1)
            const refuse = this.failing.get(prefix) ?? 0
            if (refuse > 0) { this.failing.set(prefix, refuse - 1); throw new StorageError('Internal', 'list refused by the test') }
            return await target.list(...args)
          }
        }
        const v = Reflect.get(target, prop) as unknown
        return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v
      }
    })
  }

  /** Ends the newest watch under `prefix` with an error, as the store ends a watch it drops. */
  fail (prefix: string): void {
    const w = this.watches.filter(x => x.prefix === prefix).pop()
    if (w === undefined) throw new Error(`no watch under ${prefix}`)
    w.handle.stop()
    w.callbacks.onError(new StorageError('Internal', 'watch ended by the test'))
  }

  count (prefix: string): number { return this.watches.filter(x => x.prefix === prefix).length }
}
