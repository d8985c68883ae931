// The tracing wrapper: one server span per request (the child of the client's W3C traceparent), outermost in the
// pipeline so authentication, authorization, admission and storage spans nest under it, and an `encode` child
// covering the response from its head to its last byte.

import type { ServerResponse } from 'node:http'
import type { Span } from '@opentelemetry/api'
import type { Tracing } from '../tracing/tracing.js'
import type { RequestHandler } from './request-limits.js'

export type RequestTracing = Pick<Tracing, 'inRequest' | 'startChild'>

/** kube-apiserver's span name for every request (its otelhttp operation name). */
export const REQUEST_SPAN_NAME = 'KubernetesAPI'

export function withTracing (tracing: RequestTracing, next: RequestHandler): RequestHandler {
  return async (req, res, target) => {
    const attributes = {
      'http.method': req.method ?? 'GET',
      'http.target': target.url.pathname + target.url.search,
      'http.user_agent': req.headers['user-agent'] ?? '',
      'http.long_running': target.longRunning
    }
    await tracing.inRequest(REQUEST_SPAN_NAME, req.headers, attributes, async span => {
      timeResponse(res, () => tracing.startChild('encode'))
      // The span ends with the response (a watch's span lasts as long as the watch), whatever the handler resolved.
      res.once('close', () => endRequestSpan(span, res))
      await next(req, res, target)
    })
  }
}

function endRequestSpan (span: Span, res: ServerResponse): void {
  span.setAttribute('http.status_code', res.statusCode)
  if (res.statusCode >= 500) span.setStatus({ code: 2, message: `HTTP ${res.statusCode}` })
  span.end()
}

/**
 * Handlers encode and write through `res.writeHead` and `res.end` in many places (single objects, chunked lists, watch
 * frames); wrapping the head write is the one point they all pass, so the child span starts there and ends when the
 * last byte is handed to the connection.
 */
function timeResponse (res: ServerResponse, start: () => Span | undefined): void {
  const writeHead = res.writeHead
  let span: Span | undefined
  let started = false
  res.writeHead = function (this: ServerResponse, ...args: Parameters<ServerResponse['writeHead']>) {
    if (!started) {
      started = true
      span = start()
      const end = (): void => { span?.end(); span = undefined }
      res.once('finish', end)
      res.once('close', end)
    }
    return writeHead.apply(this, args)
  } as ServerResponse['writeHead']
}
