// The RequestContext controllers inside the API server write with.

import type { RequestContext } from './types.js'

export function internalContext (username: string): RequestContext {
  return { user: { username, groups: ['system:masters'] }, dryRun: false, fieldValidation: 'Ignore', warnings: [] }
}
