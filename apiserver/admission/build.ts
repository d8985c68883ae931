// Builds the admission chain: every enabled plugin, in kube-apiserver's fixed order, from its factory and configuration.

import type { Authorizer } from '../auth/types.js'
import type { Registry } from '../registry/types.js'
import type { MutatingAdmission, WriteAdmission } from '../registry/admission.js'
import { AdmissionOptionsError, type AdmissionDeps, type AdmissionPluginFactory } from './plugins.js'
import { builtinPluginFactories } from './builtin.js'

/** The resolved admission options (apiserver/cli/admission-flags.ts makes them from the flags). */
export interface AdmissionOptions {
  /** Enabled plugin names, in PLUGIN_ORDER. */
  plugins: string[]
  /** Per-plugin configuration from --admission-control-config-file. */
  configs: Map<string, unknown>
}

/**
 * Plugins whose behaviour the registry (strategies, write checks) or the authorization stack (NodeRestriction) carries.
 * They are switched there, not built here: `registryOptions` and `nodeRestriction` say how.
 */
export const REGISTRY_PLUGINS: readonly string[] = [
  'NamespaceLifecycle', 'ServiceAccount', 'Priority', 'DefaultTolerationSeconds', 'NodeRestriction',
  'CertificateApproval', 'CertificateSigning', 'CertificateSubjectRestriction'
]

export interface BuildAdmissionInput {
  registry: () => Registry
  authorizer?: Authorizer
  options: AdmissionOptions
  /** Other plugins by name (PodSecurity, the webhooks, ValidatingAdmissionPolicy); they win over the built-in ones. */
  pluginFactories?: Record<string, AdmissionPluginFactory>
  now?: () => number
}

export interface BuiltAdmission {
  mutating: MutatingAdmission[]
  validating: WriteAdmission[]
  /** Enabled names actually built here or carried by the registry. */
  active: string[]
  /** Enabled names with no implementation in orch (default-on ones are skipped silently; the caller may warn). */
  unimplemented: string[]
  /** createRegistry options following the enabled set: the built-in steps on or off. */
  registryOptions: { serviceAccountAdmission: boolean, disabledAdmission: string[] }
  /** createAuthorizationStack's option: whether NodeRestriction runs (with the Node authorization mode). */
  nodeRestriction: boolean
}

export function buildAdmission (input: BuildAdmissionInput): BuiltAdmission {
  const deps: AdmissionDeps = { registry: input.registry, authorizer: input.authorizer, now: input.now ?? Date.now }
  const factories: Record<string, AdmissionPluginFactory> = { ...builtinPluginFactories(), ...input.pluginFactories }
  const out: BuiltAdmission = { mutating: [], validating: [], active: [], unimplemented: [], registryOptions: { serviceAccountAdmission: false, disabledAdmission: [] }, nodeRestriction: false }
  for (const name of input.options.plugins) {
    const factory = factories[name]
    if (factory === undefined) {
      if (REGISTRY_PLUGINS.includes(name)) out.active.push(name)
      else out.unimplemented.push(name)
      continue
    }
    let plugin
    try {
      plugin = factory(deps, input.options.configs.get(name))
    } catch (err) {
      throw new AdmissionOptionsError(`couldn't init admission plugin "${name}": ${(err as Error).message}`)
    }
    if (plugin.mutating !== undefined) out.mutating.push(plugin.mutating)
    if (plugin.validating !== undefined) out.validating.push(plugin.validating)
    out.active.push(name)
  }
  const on = (name: string): boolean => input.options.plugins.includes(name)
  out.registryOptions.serviceAccountAdmission = on('ServiceAccount')
  out.registryOptions.disabledAdmission = REGISTRY_PLUGINS.filter(p => !on(p) && p !== 'ServiceAccount' && p !== 'NodeRestriction')
  out.nodeRestriction = on('NodeRestriction')
  return out
}
