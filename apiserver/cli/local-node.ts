// `orch up`'s own orchlet: the node agent for this machine, talking to the control plane through its kubeconfig.

import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { createServer } from 'node:net'
import { dirname, join } from 'node:path'
import { issueCertificate } from '../pki/certs.js'
import type { ServerPki } from '../pki/data-dir.js'
import { issueNodeClient, nodeKubeconfigPath, servingHosts, writeClientKubeconfig } from './security.js'
import type { Logger } from 'pino'
import { loadOrchletConfig } from '../../agent/config/load.js'
import { runAgent, type RunningAgent } from '../../agent/agent.js'
import type { OrchletConfig } from '../../agent/config/types.js'

export interface LocalNodeOptions {
  dataDir: string
  kubeconfigPath: string
  nodeName: string
  /** Serving port of the orchlet (0 picks a free one); default 10250, or a free one when 10250 is taken. */
  port?: number
  /** --container-runtime-endpoint of the orchlet. */
  containerRuntimeEndpoint?: string
  /** More orchlet flags (`--orchlet-arg`), after orch up's own: they win. */
  extraArgs?: string[]
  /** An OrchletConfiguration file to use instead of the generated one. */
  configFile?: string
  /** --node-ip of the orchlet. */
  nodeIP?: string
  logger: Logger
}

/** Where `orch up` puts the local orchlet's serving pair, issued by the cluster CA (so the API server can verify it). */
const localServingPair = (dataDir: string): { cert: string, key: string } =>
  ({ cert: join(dataDir, 'orchlet', 'pki', 'orchlet.crt'), key: join(dataDir, 'orchlet', 'pki', 'orchlet.key') })

/** The port if nothing listens on it on loopback, else 0 (a free one): a second `orch up` on the box still starts. */
async function defaultPortOrFree (port: number): Promise<number> {
  return await new Promise(resolve => {
    const probe = createServer()
    probe.once('error', () => resolve(0))
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(port)))
  })
}

const GENERATED = (port: number, healthzPort: number, dataDir: string): string => [
  'apiVersion: orchlet.config.orch.io/v1beta1',
  'kind: OrchletConfiguration',
  `port: ${port}`,
  // The local orchlet is reached only by the control plane on the same box: loopback, not every interface.
  'address: 127.0.0.1',
  // As a kubeadm node: no anonymous access; the API server's client certificate (cluster CA) or a bearer token
  // checked by TokenReview; every request authorized by SubjectAccessReview.
  'authentication:',
  '  anonymous: {enabled: false}',
  '  webhook: {enabled: true}',
  `  x509: {clientCAFile: ${JSON.stringify(join(dataDir, 'pki', 'ca.crt'))}}`,
  'authorization: {mode: Webhook}',
  'readOnlyPort: 0',
  `healthzPort: ${healthzPort}`,
  'fileCheckFrequency: 5s',
  // Memory pressure learnt from the kernel's memcg threshold notification where the box has cgroup v1 and python3.
  'kernelMemcgNotification: true',
  ''
].join('\n')

export interface PreparedNode { config: OrchletConfig, root: string, logger: Logger, generated?: { file: string, text: string } }

/**
 * Loads and validates the orchlet's configuration before anything listens or writes (`orch up` refuses a bad
 * --orchlet-config with one line naming the file's field). Unless the user gives a config file, one is generated with
 * the serving ports (the read-only port stays off, as for a kubeadm node); it is written when the node starts.
 */
export async function prepareLocalNode (o: LocalNodeOptions): Promise<PreparedNode> {
  const root = join(o.dataDir, 'orchlet')
  const log = o.logger.child({ component: 'orchlet' })
  const configFile = o.configFile ?? join(root, 'config.yaml')
  const port = o.port ?? await defaultPortOrFree(10250)
  const healthzPort = o.port === 0 ? 0 : await defaultPortOrFree(10248)
  if (o.port === undefined && port === 0) log.info('port 10250 is taken: the local orchlet serves on a free port')
  const generated = o.configFile === undefined ? { file: configFile, text: GENERATED(port, healthzPort, o.dataDir) } : undefined
  const config = await loadOrchletConfig([
    '--config', configFile,
    '--orchconfig', o.kubeconfigPath,
    '--root-dir', root,
    '--cert-dir', join(root, 'pki'),
    '--hostname-override', o.nodeName,
    ...(o.nodeIP !== undefined ? ['--node-ip', o.nodeIP] : []),
    ...(o.containerRuntimeEndpoint !== undefined ? ['--container-runtime-endpoint', o.containerRuntimeEndpoint] : []),
    ...(o.extraArgs ?? [])
  ], {}, {
    logger: { warn: (msg: string) => log.warn(msg) },
    readFile: async f => (generated !== undefined && f === generated.file ? generated.text : await readFile(f, 'utf8'))
  })
  return { config, root, logger: log, generated }
}

/**
 * The local orchlet's credentials, all from the cluster CA: its kubeconfig (client certificate CN system:node:NAME in
 * system:nodes) and, unless its configuration names its own pair or asks for one by CSR, a serving pair for every
 * address the orchlet may be reached on (so the API server can verify it). Made anew at every start.
 */
export async function writeLocalNodeCredentials (p: PreparedNode, dataDir: string, server: string, pki: ServerPki): Promise<void> {
  const nodeName = p.config.hostnameOverride
  await mkdir(join(dataDir, 'orchlet'), { recursive: true, mode: 0o700 })
  await writeClientKubeconfig(nodeKubeconfigPath(dataDir), server, pki, await issueNodeClient(pki, nodeName))
  if (p.config.tlsCertFile !== '' || p.config.serverTLSBootstrap) return
  const pair = localServingPair(dataDir)
  await mkdir(dirname(pair.cert), { recursive: true, mode: 0o700 })
  const hosts = servingHosts(p.config.address, [nodeName, ...p.config.nodeIP])
  const serving = await issueCertificate(pki.ca, { subject: { commonName: `system:node:${nodeName}`, organizations: ['system:nodes'] }, usage: 'server', hosts })
  await writeFile(pair.key, serving.keyPem, { mode: 0o600 })
  await writeFile(pair.cert, serving.certPem)
  p.config = { ...p.config, tlsCertFile: pair.cert, tlsPrivateKeyFile: pair.key }
}

/** Starts the orchlet with state under DATA_DIR/orchlet. */
export async function startLocalNode (p: PreparedNode): Promise<RunningAgent> {
  await mkdir(p.root, { recursive: true })
  if (p.generated !== undefined) await writeFile(p.generated.file, p.generated.text)
  return await runAgent(p.config, { logger: p.logger })
}
