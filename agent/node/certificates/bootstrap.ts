// The bootstrap step (the kubelet's LoadClientCert): with no usable --orchconfig, request a client certificate through the bootstrap connection, store it, write --orchconfig.

import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { setTimeout as sleepFor } from 'node:timers/promises'
import { loadKubeconfig, type Connection } from '../../../apiserver/client/kubeconfig.js'
import type { ApiClient } from '../../../apiserver/client/rest-client.js'
import { createCsrPem, generatePrivateKey, nodeTemplate, usagesFor } from './csr.js'
import { createFileStore } from './file-store.js'
import { retryDelay, type ManagerLogger } from './manager.js'
import { writeOrchconfig } from './orchconfig-file.js'
import { parsePair } from './pem.js'
import { CLIENT_SIGNER, requestCertificate, waitForCertificate } from './request.js'

export const CLIENT_PREFIX = 'orchlet-client'
/** The key waiting for its first certificate, kept across restarts so a pending request stays answerable. */
const TMP_KEY = `${CLIENT_PREFIX}.key.tmp`

export interface BootstrapOptions {
  orchconfig: string
  bootstrapOrchconfig: string
  certDir: string
  nodeName: string
  /** The API client of a connection; the bootstrap client is closed when done. */
  makeClient: (conn: Connection) => ApiClient
  logger: ManagerLogger
  now?: () => number
  signal?: AbortSignal
  /** How long one request waits for its certificate (the kubelet: an hour). */
  waitTimeoutMs?: number
  pollMs?: number
  /** Pause before attempt n+1 after n failures (default: 2s doubling, then every 32s). */
  retryDelayMs?: (failures: number) => number
}

/**
 * The kubelet's isClientConfigStillValid: the file exists and loads, and every certificate of its client pair (if it
 * has one; a token-only file is fine) is within its validity now.
 */
export function isClientConfigStillValid (path: string, now: number, logger?: ManagerLogger): boolean {
  if (!existsSync(path)) return false
  let conn: Connection
  try { conn = loadKubeconfig(path) } catch (err) {
    logger?.warn({ path, err: (err as Error).message }, 'unable to read existing client config')
    return false
  }
  if (conn.clientCertPem === undefined) return true
  try {
    const pair = parsePair(conn.clientCertPem.toString('utf8'), conn.clientKeyPem?.toString('utf8') ?? '')
    if (now < pair.notBefore || now >= pair.notAfter) {
      logger?.info({ path, notAfter: new Date(pair.notAfter).toISOString() }, 'part of the existing client certificate is expired')
      return false
    }
    return true
  } catch (err) {
    logger?.warn({ path, err: (err as Error).message }, 'unable to read the existing client certificate')
    return false
  }
}

/** The key to request with: the stored pair's (even expired), else the pending one in certDir, else a new one saved there. */
async function bootstrapKey (certDir: string, storedKey: string | undefined): Promise<string> {
  if (storedKey !== undefined) return storedKey
  const path = join(certDir, TMP_KEY)
  if (existsSync(path)) {
    const pem = readFileSync(path, 'utf8')
    try { usagesFor(pem, 'client'); return pem } catch { /* unreadable: replaced below */ }
  }
  const pem = await generatePrivateKey()
  mkdirSync(certDir, { recursive: true, mode: 0o700 })
  writeFileSync(path, pem, { mode: 0o600 })
  return pem
}

/** Requests until a certificate is issued; each failure (denied, failed, timed out, unreachable) is logged and retried. */
async function obtainCertificate (client: ApiClient, keyPem: string, o: BootstrapOptions): Promise<string> {
  const csrPem = await createCsrPem(keyPem, nodeTemplate(o.nodeName))
  for (let failures = 0; ; failures++) {
    o.signal?.throwIfAborted()
    try {
      const req = await requestCertificate(client, { csrPem, signerName: CLIENT_SIGNER, usages: usagesFor(keyPem, 'client'), generateName: 'node-csr-' })
      o.logger.info({ csr: req.name }, 'waiting for the client certificate to be issued')
      return await waitForCertificate(client, req, { timeoutMs: o.waitTimeoutMs ?? 3600_000, pollMs: o.pollMs, signal: o.signal, logger: o.logger, now: o.now })
    } catch (err) {
      o.signal?.throwIfAborted()
      o.logger.error({ err: (err as Error).message }, 'failed to get a client certificate through the bootstrap connection; retrying')
    }
    const delay = o.retryDelayMs?.(failures + 1) ?? retryDelay(failures + 1, Math.random)
    await sleepFor(delay, undefined, { signal: o.signal })
  }
}

/** Resolves true once it bootstrapped, false when --orchconfig was already usable. */
export async function bootstrapClientCertificate (o: BootstrapOptions): Promise<boolean> {
  const now = o.now ?? Date.now
  if (isClientConfigStillValid(o.orchconfig, now(), o.logger)) return false
  o.logger.info({ orchconfig: o.orchconfig, bootstrap: o.bootstrapOrchconfig }, 'using the bootstrap connection to request a client certificate')
  const bootstrap = loadKubeconfig(o.bootstrapOrchconfig)
  const store = createFileStore({ dir: o.certDir, prefix: CLIENT_PREFIX, now })
  const keyPem = await bootstrapKey(o.certDir, store.current()?.keyPem)
  const client = o.makeClient(bootstrap)
  try {
    const certPem = await obtainCertificate(client, keyPem, o)
    store.update(certPem, keyPem)
  } finally {
    await client.close()
  }
  rmSync(join(o.certDir, TMP_KEY), { force: true })
  writeOrchconfig(o.orchconfig, bootstrap, store.currentPath)
  o.logger.info({ orchconfig: o.orchconfig, certificate: store.currentPath }, 'client certificate issued; connection file written')
  return true
}
