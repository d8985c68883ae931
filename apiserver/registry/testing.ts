// Test fixtures of the registry: a real LMDB store in a temp dir, a registry on it, request contexts, sinks.

import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pino } from 'pino'
import { openLmdbStore } from '../storage/lmdb/index.js'
import type { Store } from '../storage/store.js'
import type { StatusError } from '../errors/status-error.js'
import type { ApiWatchEvent, DecodedObject, FieldValidation, RequestContext, WatchEncoder, WatchSink } from './types.js'
import { createRegistry, type OrchRegistry, type RegistryOptions } from './registry.js'
import { selectorIndexer } from './selector-index.js'

export const silentLogger = pino({ level: 'silent' })

export interface Fixture { store: Store, registry: OrchRegistry, close(): Promise<void> }

/** A store in a fresh temp dir (indexed as the API server's, unless `unindexed`) and a started registry on it; `close` undoes both. */
export async function openFixture (opts: Partial<RegistryOptions> & { retentionMs?: number, unindexed?: boolean } = {}): Promise<Fixture> {
  const dir = mkdtempSync(join(tmpdir(), 'orch-registry-'))
  const store = await openLmdbStore({ path: dir, retentionMs: opts.retentionMs, indexer: opts.unindexed === true ? undefined : selectorIndexer })
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
