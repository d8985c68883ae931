// `orch up` / `orch apiserver`: opens the store, starts the registry and the HTTP server, writes the kubeconfig, shuts down on signals.

import { mkdir, rm } from 'node:fs/promises'
import { join } from 'node:path'
import type { Logger } from 'pino'
import { createApiServer, type ApiServer } from '../server.js'
import { createRegistry } from '../registry/registry.js'
import { openLmdbStore } from '../storage/lmdb/index.js'
import { buildOpenAPIv2, buildOpenAPIv3GroupVersion } from '../schema/openapi.js'
import type { Store } from '../storage/store.js'
import type { Registry } from '../registry/types.js'
import { writeKubeconfig } from './kubeconfig.js'
import { startLocalNode } from './local-node.js'
import { createSandbox } from '../../sandbox/sandbox.js'
import { lazySandboxCelRules } from '../registry/cel-rules.js'
import type { RunningAgent } from '../../agent/agent.js'

export interface UpOptions {
  dataDir: string
  port: number
  bindAddress: string
  logger: Logger
  /** Run an orchlet for this machine (`orch up`); `orch apiserver` runs the API server alone. */
  localNode?: { nodeName: string; port: number; configFile?: string }
}

export interface ControlPlane {
  server: ApiServer
  /** The address clients use (http://host:port). */
  url: string
  kubeconfigPath: string
  /** Drains and stops everything: readyz fails, watches end, store flushed. Idempotent. */
  stop(): Promise<void>
}

/** Host for the kubeconfig: a wildcard bind is reached through loopback. */
function clientHost (bind: string): string {
  if (bind === '0.0.0.0' || bind === '') return '127.0.0.1'
  if (bind === '::') return '[::1]'
  return bind.includes(':') ? `[${bind}]` : bind
}

export async function startControlPlane (o: UpOptions): Promise<ControlPlane> {
  const { logger } = o
  await mkdir(o.dataDir, { recursive: true })
  const kubeconfigPath = join(o.dataDir, 'kubeconfig')
  // A kubeconfig from an earlier run names an old port: remove it so it appears only once we serve.
  await rm(kubeconfigPath, { force: true })
  const store: Store = await openLmdbStore({ path: join(o.dataDir, 'store'), logger })
  let registry: Registry | undefined
  let server: ApiServer | undefined
  // One CEL sandbox for the process, made when the first CRD with validation rules needs it.
  const cel = lazySandboxCelRules(async () => await createSandbox({ deadlineMs: 250 }))
  try {
    registry = createRegistry({ store, logger, celRules: cel })
    let registryStarted = false
    const startRegistry = registry.start().then(() => { registryStarted = true })
    server = createApiServer({
      registry,
      logger,
      openapi: { v2: buildOpenAPIv2, v3GroupVersion: buildOpenAPIv3GroupVersion },
      healthChecks: [
        { name: 'etcd', check: async () => { await store.get('/healthz-probe') } },
        { name: 'poststarthook/start-registry', check: () => { if (!registryStarted) throw new Error('registry not started') } }
      ]
    })
    await startRegistry
    const { port } = await server.listen({ port: o.port, host: o.bindAddress })
    const url = `http://${clientHost(o.bindAddress)}:${port}`
    await writeKubeconfig(kubeconfigPath, url)
    logger.info({ url, dataDir: o.dataDir, kubeconfig: kubeconfigPath }, 'orch is serving')
    const node: RunningAgent | undefined = o.localNode === undefined
      ? undefined
      : await startLocalNode({ dataDir: o.dataDir, kubeconfigPath, logger, ...o.localNode })
    let stopping: Promise<void> | undefined
    const srv = server
    const reg = registry
    return {
      server: srv,
      url,
      kubeconfigPath,
      stop: () => (stopping ??= (async () => {
        // The node agent goes first, while the API server can still take its last status writes.
        await node?.stop()
        srv.beginShutdown()
        await srv.close()
        await reg.stop()
        cel.dispose()
        await store.close()
        await rm(kubeconfigPath, { force: true })
      })())
    }
  } catch (err) {
    await server?.close().catch(() => {})
    await registry?.stop().catch(() => {})
    cel.dispose()
    await store.close().catch(() => {})
    throw err
  }
}

/** Runs until SIGTERM/SIGINT, then shuts down cleanly; resolves with the exit code. */
export async function runUntilSignalled (o: UpOptions): Promise<number> {
  const cp = await startControlPlane(o)
  return await new Promise<number>(resolve => {
    const onSignal = (signal: NodeJS.Signals): void => {
      process.off('SIGTERM', onSignal)
      process.off('SIGINT', onSignal)
      o.logger.info({ signal }, 'shutting down')
      cp.stop().then(() => { o.logger.info('stopped'); resolve(0) }, err => { o.logger.error({ err }, 'shutdown failed'); resolve(1) })
    }
    process.on('SIGTERM', onSignal)
    process.on('SIGINT', onSignal)
  })
}
