// The kubeconfig `orch up` writes once the server is ready: cluster `orch` (https, its CA inline), context `orch`, user `orch`.

import { rename, writeFile } from 'node:fs/promises'
import { stringify } from 'yaml'

/** What the kubeconfig carries besides the address: the CA to trust and the user's client pair (all PEM). */
export interface KubeconfigCredentials { caPem: string; clientCertPem: string; clientKeyPem: string }

const b64 = (pem: string): string => Buffer.from(pem).toString('base64')

/**
 * For a plain-http server (in-process tests only) the cluster also says `insecure-skip-tls-verify: true`:
 * meaningless without TLS, but @kubernetes/client-node refuses http:// servers unless it is set.
 */
export function kubeconfigYaml (server: string, creds?: KubeconfigCredentials): string {
  const cluster: Record<string, unknown> = { server }
  if (server.startsWith('http://')) cluster['insecure-skip-tls-verify'] = true
  if (creds !== undefined) cluster['certificate-authority-data'] = b64(creds.caPem)
  const user = creds === undefined ? {} : { 'client-certificate-data': b64(creds.clientCertPem), 'client-key-data': b64(creds.clientKeyPem) }
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'orch', cluster }],
    users: [{ name: 'orch', user }],
    contexts: [{ name: 'orch', context: { cluster: 'orch', user: 'orch', namespace: 'default' } }],
    'current-context': 'orch',
    preferences: {}
  })
}

/** Written atomically (temp file + rename) so a watcher never reads half a file. */
export async function writeKubeconfig (path: string, server: string, creds?: KubeconfigCredentials): Promise<void> {
  const tmp = `${path}.${process.pid}.tmp`
  await writeFile(tmp, kubeconfigYaml(server, creds), { mode: 0o600 })
  await rename(tmp, path)
}
