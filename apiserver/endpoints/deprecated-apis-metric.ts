// The apiserver_requested_deprecated_apis gauge (kube-apiserver's name, help and labels) on a prom-client registry.
import { Gauge, type Registry } from 'prom-client'
import type { DeprecatedApiRecorder, DeprecatedApiRequest } from './deprecated-apis.js'

/** Sets the gauge to 1 for each deprecated group/version/resource/subresource requested since start, as Kubernetes does. */
export class DeprecatedApisGauge implements DeprecatedApiRecorder {
  private readonly gauge: Gauge<'group' | 'version' | 'resource' | 'subresource' | 'removed_release'>

  constructor (registry: Registry) {
    this.gauge = new Gauge({
      name: 'apiserver_requested_deprecated_apis',
      help: '[STABLE] Gauge of deprecated APIs that have been requested, broken out by API group, version, resource, subresource, and removed_release.',
      labelNames: ['group', 'version', 'resource', 'subresource', 'removed_release'],
      registers: [registry]
    })
  }

  record (r: DeprecatedApiRequest): void {
    this.gauge.set({ group: r.group, version: r.version, resource: r.resource, subresource: r.subresource, removed_release: r.removedRelease }, 1)
  }
}
