// The CEL environments of webhook match conditions: `object`, `oldObject` and `request` as Kubernetes declares them,
// and, for expressions that use it, the `authorizer` variable with its library.

import type { CelEnvironment } from '../../../sandbox/sandbox.js'

/** `object` and `oldObject` are the request's objects (null when absent, as on DELETE or CREATE); `request` is the AdmissionRequest. */
export const MATCH_CONDITION_ENVIRONMENT: CelEnvironment = {
  variables: {
    object: { type: 'dyn' },
    oldObject: { type: 'dyn' },
    request: { type: 'dyn' }
  }
}

/** With `authorizer` (checks of the requesting user, answered by the server's authorizer, as v1.29 offers them). */
export const MATCH_CONDITION_AUTHORIZER_ENVIRONMENT: CelEnvironment = {
  variables: { ...MATCH_CONDITION_ENVIRONMENT.variables, authorizer: { type: 'kubernetes.authorization.Authorizer' } },
  authorizer: true
}

/** Whether an expression uses the `authorizer` variable (and so needs its environment and the replaying evaluator). */
export const usesAuthorizer = (expression: string): boolean => /\bauthorizer\b/.test(expression)

/** The environment an expression compiles in. */
export const matchConditionEnvironment = (expression: string): CelEnvironment =>
  usesAuthorizer(expression) ? MATCH_CONDITION_AUTHORIZER_ENVIRONMENT : MATCH_CONDITION_ENVIRONMENT
