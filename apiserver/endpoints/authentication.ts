// The authentication step: a named wrapper that finds the request's user or answers 401 as kube-apiserver words it.

import type { Logger } from 'pino'
import { unauthorized } from '../errors/status-error.js'
import { AuthenticationError } from '../auth/types.js'
import type { Authenticator } from '../auth/authenticator.js'
import type { RequestHandler } from './request-limits.js'

/** Sets `target.user`; a refused credential is 401 `Unauthorized` (the reason is only logged, never shown). */
export function withAuthentication (authenticator: Authenticator, logger: Logger, next: RequestHandler): RequestHandler {
  return async (req, res, target) => {
    let user
    try {
      user = (await authenticator.authenticate(req)).user
    } catch (err) {
      if (!(err instanceof AuthenticationError)) throw err
      logger.debug({ method: req.method, url: req.url, reason: err.message }, 'unable to authenticate the request')
      throw unauthorized()
    }
    target.user = user
    await next(req, res, target)
  }
}
