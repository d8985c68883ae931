// The orchlet's certificates together: the bootstrap, the client certificate manager feeding the API client, the serving one feeding the server.

import { loadKubeconfig, type Connection } from '../../../apiserver/client/kubeconfig.js'
import type { ApiClient } from '../../../apiserver/client/rest-client.js'
import { bootstrapClientCertificate, CLIENT_PREFIX } from './bootstrap.js'
import { nodeTemplate, type CsrTemplate } from './csr.js'
import { createFileStore } from './file-store.js'
import { createCertificateManager, type CertificateManager, type ManagerClock, type ManagerLogger } from './manager.js'
import { CLIENT_SIGNER, SERVING_SIGNER } from './request.js'

export const SERVER_PREFIX = 'orchlet-server'

export interface CertificateSettings {
  orchconfig: string
  bootstrapOrchconfig: string
  certDir: string
  rotateCertificates: boolean
  serverTLSBootstrap: boolean
}

export interface OrchletCertificatesOptions {
  /** The orchlet's configuration (OrchletConfig fits). */
  config: CertificateSettings
  nodeName: string
  /** Makes an API client (the orchlet's qps, burst, user agent) for a connection. */
  makeClient: (conn: Connection) => ApiClient
  logger: ManagerLogger
  clock?: ManagerClock
  random?: () => number
  signal?: AbortSignal
  /** spec.expirationSeconds of renewals and serving requests (default: the signer's). */
  expirationSeconds?: number
  waitTimeoutMs?: number
  pollMs?: number
  /** Bootstrap retry pause after n failures. */
  retryDelayMs?: (failures: number) => number
}

/** What the orchlet's server needs to swap its serving pair. */
export interface TlsTarget { updateTls(pair: { cert: Buffer; key: Buffer }): void }

export interface OrchletCertificates {
  /** The API client; its credentials follow the client certificate manager. */
  readonly client: ApiClient
  readonly clientManager?: CertificateManager
  servingManager(): CertificateManager | undefined
  /** With --rotate-server-certificates: requests serving certificates for these node addresses and serves them. */
  serve(server: TlsTarget, addresses: ReadonlyArray<{ type: string; address: string }>): void
  stop(): void
}

/** The kubelet's serving template: DNS names of the Hostname/*DNS addresses (and the node name), IPs of the *IP ones. */
export function servingTemplate (nodeName: string, addresses: ReadonlyArray<{ type: string; address: string }>): CsrTemplate | undefined {
  if (addresses.length === 0) return undefined
  const dnsNames = [...new Set([nodeName, ...addresses.filter(a => a.type === 'Hostname' || a.type.endsWith('DNS')).map(a => a.address)])]
  const ipAddresses = [...new Set(addresses.filter(a => a.type === 'InternalIP' || a.type === 'ExternalIP').map(a => a.address))]
  return nodeTemplate(nodeName, { dnsNames, ipAddresses })
}

function withPair (conn: Connection, certPem: string, keyPem: string): Connection {
  return { ...conn, clientCertPem: Buffer.from(certPem), clientKeyPem: Buffer.from(keyPem) }
}

/**
 * Bootstraps when --orchconfig is missing or expired and --bootstrap-orchconfig is given, makes the API client from
 * --orchconfig (with the store's current pair when rotating) and starts the client certificate manager.
 */
export async function setUpCertificates (o: OrchletCertificatesOptions): Promise<OrchletCertificates> {
  const { config: c, nodeName, logger } = o
  const clockNow = o.clock === undefined ? undefined : () => (o.clock as ManagerClock).now()
  const common = { logger, clock: o.clock, random: o.random, expirationSeconds: o.expirationSeconds, waitTimeoutMs: o.waitTimeoutMs, pollMs: o.pollMs }
  if (c.bootstrapOrchconfig !== '') {
    await bootstrapClientCertificate({
      orchconfig: c.orchconfig, bootstrapOrchconfig: c.bootstrapOrchconfig, certDir: c.certDir, nodeName, makeClient: o.makeClient,
      logger, signal: o.signal, now: clockNow, pollMs: o.pollMs, retryDelayMs: o.retryDelayMs
    })
  }
  let connection = loadKubeconfig(c.orchconfig)
  let clientManager: CertificateManager | undefined
  if (c.rotateCertificates) {
    // The connection file's own pair until a renewal lands in the store (the kubelet's BootstrapCertificatePEM).
    const initial = connection.clientCertPem !== undefined && connection.clientKeyPem !== undefined
      ? { certPem: connection.clientCertPem.toString('utf8'), keyPem: connection.clientKeyPem.toString('utf8') }
      : undefined
    const store = createFileStore({ dir: c.certDir, prefix: CLIENT_PREFIX, initial, now: clockNow })
    const cur = store.current()
    if (cur !== undefined) connection = withPair(connection, cur.certPem, cur.keyPem)
    const client = o.makeClient(connection)
    const base = connection
    let bootstrapClient: ApiClient | undefined
    const fallback = (): ApiClient => (bootstrapClient ??= o.makeClient(loadKubeconfig(c.bootstrapOrchconfig)))
    clientManager = createCertificateManager({
      ...common,
      name: 'client',
      store,
      template: () => nodeTemplate(nodeName),
      signerName: CLIENT_SIGNER,
      purpose: 'client',
      client: () => client,
      fallbackClient: c.bootstrapOrchconfig === '' ? undefined : fallback,
      onRotated: pair => {
        logger.info({}, 'certificate rotation detected, shutting down client connections to start using new credentials')
        client.setConnection(withPair(base, pair.certPem, pair.keyPem))
      }
    })
    clientManager.start()
    return finish(client, clientManager, () => { void bootstrapClient?.close() })
  }
  return finish(o.makeClient(connection), undefined, () => {})

  function finish (client: ApiClient, cm: CertificateManager | undefined, release: () => void): OrchletCertificates {
    let serving: CertificateManager | undefined
    return {
      client,
      clientManager: cm,
      servingManager: () => serving,
      serve (server, addresses) {
        if (!c.serverTLSBootstrap || serving !== undefined) return
        const store = createFileStore({ dir: c.certDir, prefix: SERVER_PREFIX, now: clockNow })
        const apply = (certPem: string, keyPem: string): void => server.updateTls({ cert: Buffer.from(certPem), key: Buffer.from(keyPem) })
        serving = createCertificateManager({
          ...common,
          name: 'serving',
          store,
          template: () => servingTemplate(nodeName, addresses),
          signerName: SERVING_SIGNER,
          purpose: 'server',
          client: () => client,
          onRotated: pair => apply(pair.certPem, pair.keyPem)
        })
        const cur = serving.current()
        const now = o.clock?.now() ?? Date.now()
        if (cur !== undefined && now < cur.notAfter) apply(cur.certPem, cur.keyPem)
        serving.start()
      },
      stop () {
        cm?.stop()
        serving?.stop()
        release()
      }
    }
  }
}
