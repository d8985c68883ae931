// Image pulls per imagePullPolicy, with the kubelet's waiting reasons for failures.

import type { ContainerRuntime, PodSandboxConfig } from '../runtime/runtime.js'
import type { Container } from './pod-types.js'
import { defaultPullPolicy } from './manifest.js'

export class ImagePullError extends Error {
  readonly reason: 'ErrImagePull' | 'ErrImageNeverPull' | 'InvalidImageName'
  constructor (reason: ImagePullError['reason'], message: string) {
    super(message)
    this.name = 'ImagePullError'
    this.reason = reason
  }
}

/** Makes the container's image present per its pull policy; resolves with the image reference. */
export async function ensureImage (runtime: ContainerRuntime, c: Container, sandbox: PodSandboxConfig): Promise<string> {
  const image = c.image.trim()
  if (image === '' || /\s/.test(image)) throw new ImagePullError('InvalidImageName', `Failed to apply default image tag "${c.image}": invalid reference format`)
  const policy = c.imagePullPolicy ?? defaultPullPolicy(image)
  if (policy !== 'Always') {
    const present = await runtime.images.imageStatus({ image })
    if (present !== undefined) return present.id
    if (policy === 'Never') throw new ImagePullError('ErrImageNeverPull', `Container image "${image}" is not present with pull policy of Never`)
  }
  try {
    return await runtime.images.pullImage({ image }, undefined, sandbox)
  } catch (err) {
    throw new ImagePullError('ErrImagePull', `Failed to pull image "${image}": ${(err as Error).message}`)
  }
}
