// The RequestContext controllers inside the API server write with.

import type { RequestContext } from './types.js'

/** `fieldManager` names the controller in the managed fields of what it writes (Kubernetes' controllers use their binary's name). */
export function internalContext (username: string, fieldManager = 'orch-controller-manager'): RequestContext {
  return { user: { username, groups: ['system:masters'] }, dryRun: false, fieldManager, fieldValidation: 'Ignore', warnings: [] }
}
