// Translates gRPC failures from a CRI runtime into RuntimeError codes, in one place.
import { status as GrpcStatus, type ServiceError } from '@grpc/grpc-js'
import { RuntimeError, type RuntimeErrorCode } from '../runtime.js'

const byStatus: Partial<Record<GrpcStatus, RuntimeErrorCode>> = {
  [GrpcStatus.NOT_FOUND]: 'NotFound',
  [GrpcStatus.ALREADY_EXISTS]: 'AlreadyExists',
  [GrpcStatus.INVALID_ARGUMENT]: 'InvalidArgument',
  [GrpcStatus.OUT_OF_RANGE]: 'InvalidArgument',
  [GrpcStatus.UNIMPLEMENTED]: 'Unimplemented',
  [GrpcStatus.UNAVAILABLE]: 'Unavailable',
  [GrpcStatus.DEADLINE_EXCEEDED]: 'DeadlineExceeded'
}

/** Codes that keep their meaning on PullImage; every other pull failure is ImagePullFailed. */
const pullPassThrough = new Set<RuntimeErrorCode>(['Unavailable', 'DeadlineExceeded', 'Unimplemented'])

/**
 * containerd (1.6: "failed to reserve container name ...: name ... is reserved for ...") and CRI-O
 * ("... is already in use by ...") report a taken sandbox/container name with status UNKNOWN; the
 * orchlet must tell that apart from a failed create, so these two messages are matched here.
 */
const nameConflict = /is reserved for|is already in use by/
const creates = new Set(['RuntimeService/CreateContainer', 'RuntimeService/RunPodSandbox'])
function isNameConflict (method: string, details: string): boolean {
  return creates.has(method) && nameConflict.test(details)
}

export function isServiceError (err: unknown): err is ServiceError {
  return err instanceof Error && typeof (err as Partial<ServiceError>).code === 'number'
}

/** Maps one failed call of `method` (e.g. "RuntimeService/StopContainer") to a RuntimeError. */
export function toRuntimeError (method: string, err: unknown): RuntimeError {
  if (err instanceof RuntimeError) return err
  if (!isServiceError(err)) {
    return new RuntimeError('Internal', `CRI ${method}: ${err instanceof Error ? err.message : String(err)}`)
  }
  let code: RuntimeErrorCode = byStatus[err.code as GrpcStatus] ?? 'Internal'
  if (err.code === GrpcStatus.UNKNOWN && isNameConflict(method, err.details)) code = 'AlreadyExists'
  if (method === 'ImageService/PullImage' && !pullPassThrough.has(code)) code = 'ImagePullFailed'
  const detail = err.details !== '' ? err.details : GrpcStatus[err.code]
  return new RuntimeError(code, `CRI ${method}: ${detail}`)
}
