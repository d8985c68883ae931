// Pods bound to this node (spec.nodeName), by list then watch on the API server; mirror pods are reported apart, never run.

import type { ApiClient, JsonObject } from '../../../apiserver/client/rest-client.js'
import { ApiClientError } from '../../../apiserver/client/rest-client.js'
import { isMirrorPod, type Pod } from '../pod-types.js'
import type { PodSourceRunner, SourceLogger, SourceSink } from './source.js'

export interface ApiSourceOptions {
  client: ApiClient
  nodeName: string
  sink: SourceSink
  logger: SourceLogger
}

export function createApiSource (o: ApiSourceOptions): PodSourceRunner {
  const pods = new Map<string, Pod>()
  const mirrors = new Map<string, Pod>()
  const selector = `spec.nodeName=${o.nodeName}`
  let abort: AbortController | undefined
  let running = false
  let flushQueued = false

  function flush (): void {
    if (flushQueued) return
    flushQueued = true
    queueMicrotask(() => {
      flushQueued = false
      o.sink.set('api', [...pods.values()])
      o.sink.mirrors?.([...mirrors.values()])
    })
  }

  function apply (type: string, pod: Pod): void {
    const into = isMirrorPod(pod) ? mirrors : pods
    const key = pod.metadata.uid
    if (type === 'DELETED') into.delete(key)
    else into.set(key, pod)
    flush()
  }

  async function relist (): Promise<string> {
    const list = await o.client.get('/api/v1/pods', { query: { fieldSelector: selector } })
    pods.clear()
    mirrors.clear()
    for (const item of (list.items as Pod[] | undefined) ?? []) (isMirrorPod(item) ? mirrors : pods).set(item.metadata.uid, item)
    o.sink.set('api', [...pods.values()])
    o.sink.mirrors?.([...mirrors.values()])
    return String((list.metadata as JsonObject).resourceVersion)
  }

  async function loop (): Promise<void> {
    let delay = 250
    let rv: string | undefined
    while (running) {
      try {
        if (rv === undefined) rv = await relist()
        // stop() may have run while the list was in flight: start no new watch then.
        if (!running) return
        abort = new AbortController()
        await o.client.watch('/api/v1/pods', { fieldSelector: selector, resourceVersion: rv, allowWatchBookmarks: true }, ev => {
          const obj = ev.object as unknown as Pod
          if (ev.type === 'ERROR') {
            const code = (ev.object as { code?: number }).code
            if (code === 410) rv = undefined
            return
          }
          if (obj?.metadata?.resourceVersion !== undefined) rv = obj.metadata.resourceVersion
          if (ev.type === 'BOOKMARK') return
          apply(ev.type, obj)
        }, abort.signal)
        delay = 250
      } catch (err) {
        if (!running) return
        if (err instanceof ApiClientError && err.status === 410) rv = undefined
        o.logger.warn({ err: (err as Error).message, retryInMs: delay }, 'pod watch failed')
        await new Promise(resolve => setTimeout(resolve, delay))
        delay = Math.min(delay * 2, 5000)
      }
    }
  }

  return {
    start () {
      if (running) return
      running = true
      void loop()
    },
    async refresh () { await relist() },
    stop () {
      running = false
      abort?.abort()
    }
  }
}
