// The seccomp profile of a pod's sandbox and containers, as the v1.29 kubelet picks it: the container's
// seccompProfile, else the pod's, else RuntimeDefault with --seccomp-default, else Unconfined. Localhost profiles
// are files under <root-dir>/seccomp.

import { join } from 'node:path'
import type { SecurityProfile } from '../runtime/runtime.js'

export interface SeccompProfileField { type?: string; localhostProfile?: string }

export class SeccompError extends Error {}

function fromField (p: SeccompProfileField, profileRoot: string): SecurityProfile {
  switch (p.type) {
    case 'RuntimeDefault': return { profileType: 'RuntimeDefault' }
    case 'Unconfined': return { profileType: 'Unconfined' }
    case 'Localhost':
      if (p.localhostProfile === undefined || p.localhostProfile === '') throw new SeccompError('localhostProfile must be set if seccompProfile type is Localhost.')
      return { profileType: 'Localhost', localhostRef: join(profileRoot, p.localhostProfile) }
    default: throw new SeccompError(`unknown seccompProfile type "${p.type ?? ''}"`)
  }
}

/** The profile for a container (or the sandbox, with `container` undefined). */
export function seccompProfile (pod: SeccompProfileField | undefined, container: SeccompProfileField | undefined, seccompDefault: boolean, profileRoot: string): SecurityProfile {
  if (container !== undefined) return fromField(container, profileRoot)
  if (pod !== undefined) return fromField(pod, profileRoot)
  return { profileType: seccompDefault ? 'RuntimeDefault' : 'Unconfined' }
}
