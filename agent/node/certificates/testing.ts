// Test support: a real API server with the CSR API and the csrsigning controller, the test acting as the approving administrator.

import type { Test } from 'tap'
import { pino } from 'pino'
import { openFixture } from '../../../apiserver/registry/testing.js'
import { createApiServer } from '../../../apiserver/server.js'
import { createApiClient, type ApiClient, type JsonObject } from '../../../apiserver/client/rest-client.js'
import { inProcessClient } from '../../../apiserver/controllers/client/in-process.js'
import { startControllerManager } from '../../../apiserver/controllers/manager.js'
import { createCa, type CertificateAuthority } from '../../../apiserver/pki/certs.js'
import { CSR_PATH } from './request.js'

export const silent = pino({ level: 'silent' })

export interface CsrApi {
  url: string
  ca: CertificateAuthority
  /** An administrator's client of the server (no authentication on the fixture server). */
  admin: ApiClient
  list(): Promise<JsonObject[]>
  /** Adds a condition through /approval, as `kubectl certificate approve|deny` does. */
  decide(name: string, type: 'Approved' | 'Denied', reason?: string, message?: string): Promise<void>
  /** Resolves with the first request (by creation) that `match` accepts, polling. */
  waitFor(match: (csr: JsonObject) => boolean, timeoutMs?: number): Promise<JsonObject>
}

export function newClient (url: string): ApiClient {
  return createApiClient({ connection: { server: url, insecureSkipTlsVerify: false }, qps: 0, burst: 0, contentType: 'application/json', userAgent: 'test' })
}

/** The fixture API server with csrsigning (lifetime `durationMs`, default one day); nothing approves unless the test does. */
export async function startCsrApi (t: Test, durationMs = 24 * 3600_000): Promise<CsrApi> {
  const fx = await openFixture()
  const server = createApiServer({ registry: fx.registry, logger: silent })
  const { port } = await server.listen({ port: 0, host: '127.0.0.1' })
  const api = { url: `http://127.0.0.1:${port}` }
  const ca = await createCa('test-cluster-ca')
  const cm = startControllerManager({
    client: inProcessClient(fx.registry, 'orch-controller-manager'), logger: silent, controllers: ['csrsigning'],
    settings: { csrSigning: { ca, durationMs } }
  })
  const admin = newClient(api.url)
  t.teardown(async () => { cm.stop(); await admin.close(); await server.close(); await fx.close() })
  const list = async (): Promise<JsonObject[]> => ((await admin.get(CSR_PATH)).items ?? []) as JsonObject[]
  return {
    url: api.url,
    ca,
    admin,
    list,
    async decide (name, type, reason = 'Test', message = `${type.toLowerCase()} by the test`) {
      const cur = await admin.get(`${CSR_PATH}/${name}`)
      const status = (cur.status ?? {}) as { conditions?: JsonObject[] }
      cur.status = { ...status, conditions: [...(status.conditions ?? []), { type, status: 'True', reason, message }] }
      await admin.update(`${CSR_PATH}/${name}/approval`, cur)
    },
    async waitFor (match, timeoutMs = 10_000) {
      const end = Date.now() + timeoutMs
      for (;;) {
        const found = (await list()).find(match)
        if (found !== undefined) return found
        if (Date.now() > end) throw new Error('no matching certificate signing request')
        await new Promise(resolve => setTimeout(resolve, 25))
      }
    }
  }
}

export const nameOf = (o: JsonObject): string => String((o.metadata as { name?: string }).name)
export const specOf = (o: JsonObject): Record<string, any> => (o.spec ?? {}) as Record<string, any> // eslint-disable-line @typescript-eslint/no-explicit-any
