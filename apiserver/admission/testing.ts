// Test fixtures of admission: a real LMDB registry whose admission chain is built from the named plugins.

import { openFixture, type Fixture } from '../registry/testing.js'
import type { OrchRegistry, RegistryOptions } from '../registry/registry.js'
import { buildAdmission } from './build.js'
import type { AdmissionPluginFactory } from './plugins.js'

/** A registry fixture admitting through exactly `plugins` (in PLUGIN_ORDER, as buildAdmission orders them); `opts` go to the registry. */
export async function admissionFixture (plugins: string[], factories: Record<string, AdmissionPluginFactory> = {}, opts: Partial<RegistryOptions> = {}): Promise<Fixture> {
  let registry: OrchRegistry | undefined
  const built = buildAdmission({ registry: () => registry!, options: { plugins, configs: new Map() }, pluginFactories: factories })
  const fx = await openFixture({ ...opts, mutatingAdmission: built.mutating, admission: built.validating })
  registry = fx.registry
  return fx
}

export function pod (name: string, resources: Record<string, unknown> = {}, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { containers: [{ name: 'c', image: 'busybox', resources }], ...extra } }
}
