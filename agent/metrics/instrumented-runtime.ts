// A ContainerRuntime wrapper counting and timing every CRI call under the kubelet's operation names
// (kubelet_runtime_operations_total, _duration_seconds, _errors_total).

import type { ContainerRuntime, ImageService, RuntimeService } from '../runtime/runtime.js'

/** The kubelet's instrumented_services names of each call. */
const RUNTIME_OPS: Record<keyof RuntimeService, string> = {
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

function wrap<T extends object> (service: T, ops: Record<keyof T, string>, observe: RuntimeObserver): T {
  const out: Record<string, unknown> = {}
  for (const [method, operation] of Object.entries(ops) as Array<[string, string]>) {
    const fn = (service as Record<string, unknown>)[method] as (...args: unknown[]) => Promise<unknown>
    out[method] = async (...args: unknown[]): Promise<unknown> => {
      const start = process.hrtime.bigint()
      let failed = true
      try {
        const r = await fn.apply(service, args)
        failed = false
        return r
      } finally {
        observe(operation, Number(process.hrtime.bigint() - start) / 1e9, failed)
      }
    }
  }
  return out as T
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
