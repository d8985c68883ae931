// The CEL environment of webhook match conditions: `object`, `oldObject` and `request` as Kubernetes declares them.

import type { CelEnvironment } from '../../../sandbox/sandbox.js'

/**
 * `object` and `oldObject` are the request's objects (null when absent, as on DELETE or CREATE); `request` is the
 * AdmissionRequest of the call. The optional `authorizer` variable is not declared (see README of this folder).
 */
export const MATCH_CONDITION_ENVIRONMENT: CelEnvironment = {
  variables: {
    object: { type: 'dyn' },
    oldObject: { type: 'dyn' },
    request: { type: 'dyn' }
  }
}
