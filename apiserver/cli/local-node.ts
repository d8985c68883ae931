// `orch up`'s own orchlet: the node agent for this machine, talking to the control plane through its kubeconfig.

import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { Logger } from 'pino'
import { loadOrchletConfig } from '../../agent/config/load.js'
import { runAgent, type RunningAgent } from '../../agent/agent.js'

export interface LocalNodeOptions {
  dataDir: string
  kubeconfigPath: string
  nodeName: string
  /** Serving port of the orchlet (0 picks a free one). */
  port: number
  /** An OrchletConfiguration file to use instead of the generated one. */
  configFile?: string
  logger: Logger
}

/**
 * Starts the orchlet with state under DATA_DIR/orchlet. Unless the user gives a config file, one is
 * written with the serving ports (the read-only port stays off, as for a kubeadm node).
 */
export async function startLocalNode (o: LocalNodeOptions): Promise<RunningAgent> {
  const root = join(o.dataDir, 'orchlet')
  await mkdir(root, { recursive: true })
  let configFile = o.configFile
  if (configFile === undefined) {
    configFile = join(root, 'config.yaml')
    await writeFile(configFile, [
      'apiVersion: orchlet.config.orch.io/v1beta1',
      'kind: OrchletConfiguration',
      `port: ${o.port}`,
      'readOnlyPort: 0',
      `healthzPort: ${o.port === 0 ? 0 : 10248}`,
      'fileCheckFrequency: 5s',
      ''
    ].join('\n'))
  }
  const log = o.logger.child({ component: 'orchlet' })
  const config = await loadOrchletConfig([
    '--config', configFile,
    '--orchconfig', o.kubeconfigPath,
    '--root-dir', root,
    '--cert-dir', join(root, 'pki'),
    '--hostname-override', o.nodeName
  ], {}, { logger: { warn: (msg: string) => log.warn(msg) } })
  return await runAgent(config, { logger: log })
}
