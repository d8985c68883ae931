// The CEL environment of policy expressions: object, oldObject, request, params, namespaceObject, variables.
//
// Objects are `dyn` (any kind); `request` is typed as Kubernetes' admission request. Expressions that use `authorizer`
// compile in AUTHORIZER_ENVIRONMENT and run on the replaying evaluator of authorizer.ts.

import type { StructuralSchema } from '../../schema/types.js'
import type { CelEnvironment } from '../../../sandbox/sandbox.js'

const str: StructuralSchema = { type: 'string' }
const gvk: StructuralSchema = { type: 'object', properties: { group: str, version: str, kind: str } }
const gvr: StructuralSchema = { type: 'object', properties: { group: str, version: str, resource: str } }
const REQUEST_SCHEMA: StructuralSchema = {
  type: 'object',
  properties: {
    kind: gvk,
    resource: gvr,
    subResource: str,
    requestKind: gvk,
    requestResource: gvr,
    requestSubResource: str,
    name: str,
    namespace: str,
    operation: str,
    userInfo: {
      type: 'object',
      properties: {
        username: str,
        uid: str,
        groups: { type: 'array', items: str },
        extra: { type: 'object', additionalProperties: { type: 'array', items: str } }
      }
    },
    dryRun: { type: 'boolean' }
  }
}

/** The one environment every policy expression compiles in (variables is a map, each looked up by name). */
export const POLICY_ENVIRONMENT: CelEnvironment = {
  variables: {
    object: { type: 'dyn' },
    oldObject: { type: 'dyn' },
    request: { schema: REQUEST_SCHEMA },
    params: { type: 'dyn' },
    namespaceObject: { type: 'dyn' },
    variables: { type: 'map<string, dyn>' }
  }
}

/** POLICY_ENVIRONMENT with the authorizer library and the `authorizer` variable. */
export const AUTHORIZER_ENVIRONMENT: CelEnvironment = {
  ...POLICY_ENVIRONMENT,
  variables: { ...POLICY_ENVIRONMENT.variables, authorizer: { type: 'kubernetes.authorization.Authorizer' } },
  authorizer: true
}
