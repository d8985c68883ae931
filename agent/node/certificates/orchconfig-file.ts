// The connection file the bootstrap writes (--orchconfig): the bootstrap file's server and CA, and the client pair at the store's `-current.pem`.

import { mkdirSync, renameSync, writeFileSync } from 'node:fs'
import { dirname } from 'node:path'
import { stringify } from 'yaml'
import type { Connection } from '../../../apiserver/client/kubeconfig.js'

/**
 * Writes `path` (mode 0600, atomically) as the kubelet's writeKubeconfigFromBootstrapping does: one cluster, one user
 * whose client-certificate and client-key both name `pemPath`, namespace default.
 */
export function writeOrchconfig (path: string, bootstrap: Connection, pemPath: string): void {
  const cluster: Record<string, unknown> = { server: bootstrap.server }
  if (bootstrap.caPem !== undefined) cluster['certificate-authority-data'] = bootstrap.caPem.toString('base64')
  if (bootstrap.insecureSkipTlsVerify) cluster['insecure-skip-tls-verify'] = true
  const doc = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'default-cluster', cluster }],
    users: [{ name: 'default-auth', user: { 'client-certificate': pemPath, 'client-key': pemPath } }],
    contexts: [{ name: 'default-context', context: { cluster: 'default-cluster', user: 'default-auth', namespace: 'default' } }],
    'current-context': 'default-context',
    preferences: {}
  }
  mkdirSync(dirname(path), { recursive: true })
  const tmp = `${path}.tmp`
  writeFileSync(tmp, stringify(doc), { mode: 0o600 })
  renameSync(tmp, path)
}
