// An undici dispatcher speaking to an orch API server with a kubeconfig's CA and client certificate, for tests' raw requests.

import { Agent, request } from 'undici'
import { loadKubeconfig } from '../apiserver/client/kubeconfig.js'

/** Trusts the kubeconfig's CA and presents its client certificate (the admin's, for DIR/kubeconfig). */
export function kubeconfigDispatcher (kubeconfig: string): Agent {
  const c = loadKubeconfig(kubeconfig)
  return new Agent({ connect: { ca: c.caPem, cert: c.clientCertPem, key: c.clientKeyPem, rejectUnauthorized: !c.insecureSkipTlsVerify } })
}

type RequestOptions = NonNullable<Parameters<typeof request>[1]>

/**
 * undici's `request` bound to the credentials of the kubeconfig last given to `use` (servers restarted on the same data
 * directory keep its CA and administrator certificate, so one `use` serves them all).
 */
export function tlsRequester (): { use(kubeconfig: string): void, request(url: string, opts?: RequestOptions): ReturnType<typeof request>, close(): Promise<void> } {
  let dispatcher: Agent | undefined
  return {
    use (kubeconfig) { void dispatcher?.close(); dispatcher = kubeconfigDispatcher(kubeconfig) },
    request: async (url, opts = {}) => await request(url, { ...opts, dispatcher }),
    close: async () => { await dispatcher?.destroy() }
  }
}
