// Test support: one real API server (LMDB registry over HTTP on 127.0.0.1:0), torn down with the test.

import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pino } from 'pino'
import type { Test } from 'tap'
import { openLmdbStore } from '../apiserver/storage/lmdb/index.js'
import { createRegistry, type OrchRegistry, type RegistryOptions } from '../apiserver/registry/registry.js'
import { createApiServer, type ApiServerOptions } from '../apiserver/server.js'

export interface TestApiServer { port: number; url: string; registry: OrchRegistry }

/** `serverOptions` adds to the server's options (an authenticator, ...), given the registry it serves; `registryOptions` to the registry's (admission, ...). */
export async function startTestApiServer (t: Test,
  serverOptions: (registry: OrchRegistry) => Partial<ApiServerOptions> = () => ({}),
  registryOptions: Partial<RegistryOptions> = {}): Promise<TestApiServer> {
  const dir = mkdtempSync(join(tmpdir(), 'orch-api-'))
  const silent = pino({ level: 'silent' })
  const store = await openLmdbStore({ path: dir })
  const registry = createRegistry({ store, logger: silent, ...registryOptions })
  await registry.start()
  const server = createApiServer({ registry, logger: silent, ...serverOptions(registry) })
  const { port } = await server.listen({ port: 0 })
  t.teardown(async () => {
    await server.close()
    await registry.stop()
    await store.close()
    rmSync(dir, { recursive: true, force: true })
  })
  return { port, url: `http://127.0.0.1:${port}`, registry }
}
