// Static pods from --manifest-url (with --manifest-url-header), fetched through undici every --http-check-frequency.

import { request } from '../../../apiserver/client/undici-core.js'
import { decodeManifest, toStaticPod } from '../manifest.js'
import type { Pod } from '../pod-types.js'
import type { PodSourceRunner, SourceLogger, SourceSink } from './source.js'

export interface UrlSourceOptions {
  url: string
  /** Header name -> values, in order; repeated names are all sent. */
  headers: Record<string, string[]>
  nodeName: string
  checkFrequencyMs: number
  sink: SourceSink
  logger: SourceLogger
}

export function createUrlSource (o: UrlSourceOptions): PodSourceRunner {
  let timer: NodeJS.Timeout | undefined
  let lastBody: string | undefined

  async function refresh (): Promise<void> {
    let text: string
    try {
      const headers: string[] = []
      for (const [name, values] of Object.entries(o.headers)) for (const v of values) headers.push(name, v)
      const res = await request(o.url, { headers, headersTimeout: 10_000, bodyTimeout: 10_000 })
      text = await res.body.text()
      if (res.statusCode !== 200) {
        o.logger.warn({ url: o.url, status: res.statusCode }, 'manifest URL answered with an error; keeping the previous pods')
        return
      }
    } catch (err) {
      o.logger.warn({ url: o.url, err: (err as Error).message }, 'manifest URL unreachable; keeping the previous pods')
      return
    }
    if (text === lastBody) return
    let pods: Pod[]
    try {
      pods = text.trim() === '' ? [] : decodeManifest(text, o.url).map(obj => toStaticPod(obj, 'http', o.url, o.nodeName))
    } catch (err) {
      o.logger.warn({ url: o.url, err: (err as Error).message }, 'skipping pod manifest from URL')
      return
    }
    lastBody = text
    o.sink.set('http', pods)
  }

  return {
    start () {
      void refresh()
      timer = setInterval(() => { void refresh() }, o.checkFrequencyMs)
      timer.unref()
    },
    refresh,
    stop () { if (timer !== undefined) clearInterval(timer) }
  }
}
