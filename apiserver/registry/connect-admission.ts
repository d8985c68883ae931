// Admission of connect requests (pods/exec, pods/attach, pods/portforward and the proxies), as kube-apiserver's
// connecter handler runs it: operation CONNECT, the options object (PodExecOptions, ...) as the object, before the
// target is looked up or dialed.

import { pathNotFound } from '../errors/status-error.js'
import type { WriteAdmission, WriteAttributes } from './admission.js'
import type { Obj } from './object-meta.js'
import type { ConnectTarget, RequestContext, ResourceHandler } from './types.js'

/**
 * Runs the mutating then the validating chain on `options` (its `kind` names the request's kind, e.g.
 * PodExecOptions; mutating plugins may change it in place). Throws the first refusal's StatusError.
 */
export async function admitConnect (chains: { mutating?: WriteAdmission, validating?: WriteAdmission }, handler: ResourceHandler | undefined,
  ctx: RequestContext, t: ConnectTarget, options: Obj): Promise<void> {
  if (handler === undefined) throw pathNotFound()
  if (chains.mutating === undefined && chains.validating === undefined) return
  const a: WriteAttributes = {
    operation: 'CONNECT',
    // The request's kind is the options kind (as kube-apiserver reports it for a connect); the resource is the parent's.
    definition: { ...handler.definition, kind: String(options.kind ?? handler.definition.kind) },
    namespace: t.namespace,
    name: t.name,
    subresource: t.subresource,
    object: options,
    ctx
  }
  await chains.mutating?.admit(a)
  await chains.validating?.admit(a)
}
