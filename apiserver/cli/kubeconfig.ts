// The kubeconfig `orch up` writes once the server is ready: cluster `orch`, context `orch`, a user without credentials.

import { rename, writeFile } from 'node:fs/promises'
import { stringify } from 'yaml'

/**
 * For a plain-http server the cluster also says `insecure-skip-tls-verify: true`: meaningless without
 * TLS, but @kubernetes/client-node refuses http:// servers unless it is set.
 */
export function kubeconfigYaml (server: string): string {
  const cluster: Record<string, unknown> = { server }
  if (server.startsWith('http://')) cluster['insecure-skip-tls-verify'] = true
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'orch', cluster }],
    users: [{ name: 'orch', user: {} }],
    contexts: [{ name: 'orch', context: { cluster: 'orch', user: 'orch', namespace: 'default' } }],
    'current-context': 'orch',
    preferences: {}
  })
}

/** Written atomically (temp file + rename) so a watcher never reads half a file. */
export async function writeKubeconfig (path: string, server: string): Promise<void> {
  const tmp = `${path}.${process.pid}.tmp`
  await writeFile(tmp, kubeconfigYaml(server), { mode: 0o600 })
  await rename(tmp, path)
}
