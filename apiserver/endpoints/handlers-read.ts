// The read verbs: get, list and watch.

import { isStatusError } from '../errors/status-error.js'
import { LIST_STREAM, encodeList, encodeObject, send, sendError, warningHeaders } from './encode.js'
import type { Call } from './handlers.js'
import { buildRequestContext, parseListQuery, parseTimeoutMs, parseWatchQuery } from './request-context.js'
import { createScaleTableConvertor, type TableConvertor } from './table.js'
import { countingSink, createWatchStream, defaultWatchTimeoutMs, watchContentType, watchEncoderFor } from './watch.js'

/** Subresource views (Scale) have no printer columns of their own: they use the default Table. */
function convertorFor (call: Call): TableConvertor {
  if (call.subresource === 'scale') return createScaleTableConvertor(call.env.now)
  return call.env.convertor(call.def)
}

export async function serveGet (call: Call): Promise<void> {
  const ctx = buildRequestContext(call.req, call.user, call.url.searchParams, false)
  const rv = call.url.searchParams.get('resourceVersion')
  const result = await call.handler.get(ctx, call.info.namespace, call.info.name,
    rv === null ? {} : { resourceVersion: rv }, call.subresource)
  const bytes = Buffer.isBuffer(result) ? result : result.bytes
  send(call.req, call.res, 200, encodeObject(bytes, call.media, call.pretty, convertorFor(call)), warningHeaders(ctx.warnings))
}

export async function serveList (call: Call): Promise<void> {
  const ctx = buildRequestContext(call.req, call.user, call.url.searchParams, false)
  // Compact JSON writes the items as stored: such a list may stream (the other forms parse every item anyway).
  const query = { ...parseListQuery(call.url.searchParams), stream: call.media.form === 'json' && !call.pretty ? LIST_STREAM : undefined }
  const list = await call.handler.list(ctx, call.info.namespace, query)
  send(call.req, call.res, 200, encodeList(call.def, list, call.media, call.pretty, call.env.convertor(call.def)), warningHeaders(ctx.warnings))
}

/**
 * Opens the stream lazily: if the registry refuses the watch before writing anything, the client
 * gets a plain Status; afterwards failures arrive as an ERROR event and the stream ends.
 */
export async function serveWatch (call: Call): Promise<void> {
  const { env, req, res, url, def } = call
  const ctx = buildRequestContext(req, call.user, url.searchParams, false)
  const query = parseWatchQuery(url.searchParams, call.info.name)
  const timeoutMs = parseTimeoutMs(url.searchParams) ?? defaultWatchTimeoutMs(env.random, env.minRequestTimeoutMs)
  const resourceKey = `${def.group}/${def.version}/${def.plural}`
  const encoder = watchEncoderFor(call.media, env.convertor(def), resourceKey)
  let untrack = (): void => {}
  const counted = env.watchOpened?.({ group: def.group, version: def.version, kind: def.kind })
  const stream = createWatchStream(res, warningHeaders(ctx.warnings), {
    timeoutMs,
    contentType: watchContentType(call.media),
    maxPendingBytes: env.maxWatchPendingBytes,
    onClose: () => { untrack(); counted?.closed() },
    onSlowConsumer: () => env.logger.warn({ resource: resourceKey }, 'watch closed: client too slow')
  })
  untrack = env.trackWatch(stream)
  try {
    const sink = counted === undefined ? stream.sink : countingSink(stream.sink, counted)
    const sub = await call.handler.watch(ctx, call.info.namespace, query, encoder, sink)
    stream.attach(sub)
    if (stream.closed && !res.writableEnded && !res.headersSent) res.destroy()
  } catch (err) {
    if (!stream.started && !stream.closed) {
      stream.close()
      if (isStatusError(err)) { sendError(req, res, err); return }
      throw err
    }
    stream.close()
    if (!isStatusError(err)) env.logger.error({ err }, 'watch failed after it started')
  }
}
