// The HTTP transport: controllers and the scheduler run as their own processes (`orch controller-manager`, `orch scheduler`).

import { StatusError } from '../../errors/status-error.js'
import { ApiClientError, createApiClient, type ApiClient as RestClient, type CallOptions } from '../../client/rest-client.js'
import type { Connection } from '../../client/kubeconfig.js'
import type { ApiClient, Obj, Resource, ResourceClient } from './types.js'

export interface HttpClientOptions {
  connection: Connection
  userAgent: string
  /** Client-side rate limit (ClientConnectionConfiguration qps/burst; kube-controller-manager: 20/30). */
  qps?: number
  burst?: number
}

/** API errors as the in-process transport throws them: a StatusError with the server's code and reason. */
function asStatusError (err: unknown): unknown {
  if (!(err instanceof ApiClientError)) return err
  const body = (err.body ?? {}) as { reason?: string, details?: StatusError['details'] }
  return new StatusError(err.status, (body.reason ?? err.reason) as StatusError['reason'], err.message, body.details)
}

async function wrap<T> (f: () => Promise<T>): Promise<T> {
  try { return await f() } catch (err) { throw asStatusError(err) }
}

function basePath (r: Resource, namespace: string): string {
  const root = r.group === '' ? `/api/${r.version}` : `/apis/${r.group}/${r.version}`
  return r.namespaced && namespace !== '' ? `${root}/namespaces/${encodeURIComponent(namespace)}/${r.resource}` : `${root}/${r.resource}`
}

export function httpClient (o: HttpClientOptions): ApiClient & { close(): Promise<void> } {
  const rest: RestClient = createApiClient({ connection: o.connection, qps: o.qps ?? 20, burst: o.burst ?? 30, contentType: 'application/json', userAgent: o.userAgent })
  const manager = { fieldManager: o.userAgent }
  const resource = (r: Resource): ResourceClient => {
    const item = (ns: string, name: string, sub?: string): string => `${basePath(r, ns)}/${encodeURIComponent(name)}${sub === undefined ? '' : `/${sub}`}`
    return {
      async get (ns, name, sub) {
        try { return await rest.get(item(ns, name, sub)) as Obj } catch (err) {
          if (err instanceof ApiClientError && err.status === 404) return undefined
          throw asStatusError(err)
        }
      },
      list: async (ns, opts = {}) => await wrap(async () => {
        const got = await rest.get(basePath(r, ns), { query: { ...opts } as CallOptions['query'] })
        const meta = (got.metadata ?? {}) as { resourceVersion?: string, continue?: string }
        return { items: (got.items ?? []) as Obj[], resourceVersion: meta.resourceVersion ?? '', continue: meta.continue ?? '' }
      }),
      async watch (ns, opts, handlers) {
        const abort = new AbortController()
        let ended = false
        const end = (err?: Error): void => { if (!ended) { ended = true; handlers.end(err) } }
        rest.watch(basePath(r, ns), { ...opts, allowWatchBookmarks: true, timeoutSeconds: 300 + Math.floor(Math.random() * 300) },
          e => { if (!ended) handlers.event(e.type as never, e.object as Obj) }, abort.signal)
          .then(() => end(), err => end(abort.signal.aborted ? undefined : asStatusError(err) as Error))
        return { stop () { abort.abort(); end() } }
      },
      create: async (ns, obj) => await wrap(async () => await rest.create(basePath(r, ns), obj, { query: manager }) as Obj),
      update: async (ns, obj, sub) => await wrap(async () => await rest.update(item(ns, String(obj.metadata?.name ?? ''), sub), obj, { query: manager }) as Obj),
      patch: async (ns, name, patch, sub) => await wrap(async () => await rest.mergePatch(item(ns, name, sub), patch, { query: manager }) as Obj),
      delete: async (ns, name, opts = {}) => { await wrap(async () => await rest.delete(item(ns, name), { body: { kind: 'DeleteOptions', apiVersion: 'v1', ...opts } })) },
      createSubresource: async (ns, name, sub, body) => await wrap(async () => await rest.create(item(ns, name, sub), body) as Obj)
    }
  }
  return { userAgent: o.userAgent, resource, close: async () => await rest.close() }
}
