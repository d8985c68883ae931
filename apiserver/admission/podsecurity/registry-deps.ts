// The plugin's lookups served by the registry it guards: namespaces by name and the pods of a namespace.

import { isStatusError } from '../../errors/status-error.js'
import { internalContext } from '../../registry/internal-context.js'
import type { Registry } from '../../registry/types.js'
import type { PodSecurityDeps } from './plugin.js'
import type { Obj } from './pod-view.js'

/**
 * Lookups through `registry()` (a function so the plugin can be built before the registry it is passed to).
 * Pods are read in chunks, at most `maxPods` of them, as Kubernetes bounds the namespace-update evaluation.
 */
export function registryPodSecurityDeps (registry: () => Registry, maxPods = 3000): PodSecurityDeps {
  const ctx = internalContext('system:apiserver:podsecurity')
  return {
    async namespaceLookup (name) {
      const known = registry().knownNamespace(name)
      if (known !== undefined) return known as Obj
      const h = registry().handler('', 'v1', 'namespaces')
      if (h === undefined) return undefined
      try {
        const got = await h.get(ctx, '', name, {})
        return Buffer.isBuffer(got) ? JSON.parse(got.toString('utf8')) as Obj : got.object
      } catch (err) {
        if (isStatusError(err) && err.code === 404) return undefined
        throw err
      }
    },
    async podsInNamespace (namespace) {
      const h = registry().handler('', 'v1', 'pods')
      if (h === undefined) return []
      const out: Obj[] = []
      let cont = ''
      do {
        const page = await h.list(ctx, namespace, { limit: 500, ...(cont !== '' ? { continue: cont } : {}) })
        for (const b of page.items) out.push(JSON.parse(b.toString('utf8')) as Obj)
        cont = page.continue
      } while (cont !== '' && out.length < maxPods)
      return out.slice(0, maxPods)
    }
  }
}
