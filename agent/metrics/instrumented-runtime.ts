// A ContainerRuntime wrapper counting and timing every CRI call under the kubelet's operation names
// (kubelet_runtime_operations_total, _duration_seconds, _errors_total).

import type { ContainerRuntime, ImageService, RuntimeService } from '../runtime/runtime.js'

type CriCall = Exclude<keyof RuntimeService, 'streamingUrl' | 'cniConfDir' | 'reopenContainerLog'>

/** The kubelet's instrumented_services names of each call (the runtime's other members pass through). */
const RUNTIME_OPS: Record<CriCall, string> = {
  version: 'version',
  status: 'status',
  runPodSandbox: 'run_podsandbox',
  stopPodSandbox: 'stop_podsandbox',
  removePodSandbox: 'remove_podsandbox',
  podSandboxStatus: 'podsandbox_status',
  listPodSandbox: 'list_podsandbox',
  createContainer: 'create_container',
  startContainer: 'start_container',
  stopContainer: 'stop_container',
  removeContainer: 'remove_container',
  listContainers: 'list_containers',
  containerStatus: 'container_status',
  execSync: 'exec_sync',
  containerStats: 'container_stats'
}

const IMAGE_OPS: Record<keyof ImageService, string> = {
  listImages: 'list_images',
  imageStatus: 'image_status',
  pullImage: 'pull_image',
  removeImage: 'remove_image',
  imageFsInfo: 'image_fs_info'
}

export type RuntimeObserver = (operation: string, seconds: number, failed: boolean) => void

function wrap<T extends object> (service: T, ops: Partial<Record<keyof T, string>>, observe: RuntimeObserver): T {
  return new Proxy(service, {
    get (target, prop) {
      const value: unknown = Reflect.get(target, prop, target)
      if (typeof value !== 'function') return value
      const fn = (value as (...args: unknown[]) => Promise<unknown>).bind(target)
      const operation = typeof prop === 'string' ? (ops as Record<string, string | undefined>)[prop] : undefined
      if (operation === undefined) return fn
      return async (...args: unknown[]): Promise<unknown> => {
        const start = process.hrtime.bigint()
        let failed = true
        try {
          const r = await fn(...args)
          failed = false
          return r
        } finally {
          observe(operation, Number(process.hrtime.bigint() - start) / 1e9, failed)
        }
      }
    }
  })
}

/** The same runtime, each RuntimeService and ImageService call observed. */
export function instrumentRuntime (rt: ContainerRuntime, observe: RuntimeObserver): ContainerRuntime {
  return {
    name: rt.name,
    runtime: wrap(rt.runtime, RUNTIME_OPS, observe),
    images: wrap(rt.images, IMAGE_OPS, observe),
    close: async () => await rt.close()
  }
}
