// The orchlet's tracing of CRI calls (OrchletTracing): each RuntimeService and ImageService call a span named as the
// kubelet's gRPC instrumentation names it (`runtime.v1.RuntimeService/RunPodSandbox`), the child of the pod sync.

import type { Attributes } from '@opentelemetry/api'
import type { ContainerRuntime } from './runtime.js'

export interface SpanRunner {
  inSpan<T>(name: string, attributes: Attributes, fn: () => Promise<T>): Promise<T>
}

/** The CRI calls (RuntimeService and ImageService); other members of a runtime object pass through untraced. */
const CRI_CALLS = new Set([
  'version', 'status', 'runPodSandbox', 'stopPodSandbox', 'removePodSandbox', 'podSandboxStatus', 'listPodSandbox', 'createContainer',
  'startContainer', 'stopContainer', 'removeContainer', 'listContainers', 'containerStatus', 'execSync', 'containerStats',
  'listImages', 'imageStatus', 'pullImage', 'removeImage', 'imageFsInfo'
])

function methodName (member: string): string {
  return member === 'execSync' ? 'ExecSync' : member[0]!.toUpperCase() + member.slice(1)
}

function traced<T extends object> (service: T, prefix: string, tracing: SpanRunner, runtimeName: string): T {
  return new Proxy(service, {
    get (target, prop) {
      const value: unknown = Reflect.get(target, prop, target)
      if (typeof value !== 'function') return value
      const call = (value as (...args: unknown[]) => unknown).bind(target)
      if (typeof prop !== 'string' || !CRI_CALLS.has(prop)) return call
      const name = `${prefix}/${methodName(prop)}`
      return async (...args: unknown[]) => await tracing.inSpan(name, { 'rpc.system': 'grpc', 'orch.runtime': runtimeName }, async () => await call(...args))
    }
  })
}

export function tracedRuntime (rt: ContainerRuntime, tracing: SpanRunner): ContainerRuntime {
  return {
    name: rt.name,
    runtime: traced(rt.runtime, 'runtime.v1.RuntimeService', tracing, rt.name),
    images: traced(rt.images, 'runtime.v1.ImageService', tracing, rt.name),
    close: async () => await rt.close()
  }
}
