// The APIResponseCompression gate turned off: responses are never gzipped, whatever the client accepts.

import type { RequestHandler } from './request-limits.js'

/** Hides the client's Accept-Encoding from the handlers, which then answer uncompressed. */
export function withoutResponseCompression (next: RequestHandler): RequestHandler {
  return async (req, res, target) => {
    delete req.headers['accept-encoding']
    await next(req, res, target)
  }
}
