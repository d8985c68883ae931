// Image pulls per imagePullPolicy, with the kubelet's waiting reasons for failures and its image events.

import type { ContainerRuntime, PodSandboxConfig } from '../runtime/runtime.js'
import type { Container } from './pod-types.js'
import { defaultPullPolicy } from './manifest.js'
import { goDuration } from './pod-events.js'

/** Where the image manager's events go (bound to the container being started). */
export type ImageEventSink = (type: 'Normal' | 'Warning', reason: string, message: string) => void

export class ImagePullError extends Error {
  readonly reason: 'ErrImagePull' | 'ErrImageNeverPull' | 'InvalidImageName'
  constructor (reason: ImagePullError['reason'], message: string) {
    super(message)
    this.name = 'ImagePullError'
    this.reason = reason
  }
}

/** Makes the container's image present per its pull policy; resolves with the image reference. Records the kubelet's image events. */
export async function ensureImage (runtime: ContainerRuntime, c: Container, sandbox: PodSandboxConfig, events: ImageEventSink, now: () => number = Date.now): Promise<string> {
  const image = c.image.trim()
  if (image === '' || /\s/.test(image)) {
    const err = new ImagePullError('InvalidImageName', `Failed to apply default image tag "${c.image}": invalid reference format`)
    events('Warning', 'InspectFailed', err.message)
    throw err
  }
  const policy = c.imagePullPolicy ?? defaultPullPolicy(image)
  if (policy !== 'Always') {
    const present = await runtime.images.imageStatus({ image })
    if (present !== undefined) {
      events('Normal', 'Pulled', `Container image "${image}" already present on machine`)
      return present.id
    }
    if (policy === 'Never') {
      const err = new ImagePullError('ErrImageNeverPull', `Container image "${image}" is not present with pull policy of Never`)
      events('Warning', 'ErrImageNeverPull', err.message)
      throw err
    }
  }
  events('Normal', 'Pulling', `Pulling image "${image}"`)
  const started = now()
  try {
    const ref = await runtime.images.pullImage({ image }, undefined, sandbox)
    const took = goDuration(now() - started)
    events('Normal', 'Pulled', `Successfully pulled image "${image}" in ${took} (${took} including waiting)`)
    return ref
  } catch (err) {
    const e = new ImagePullError('ErrImagePull', `Failed to pull image "${image}": ${(err as Error).message}`)
    events('Warning', 'Failed', e.message)
    throw e
  }
}
