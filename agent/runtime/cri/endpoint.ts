// Parses --container-runtime-endpoint / --image-service-endpoint values into gRPC targets.
import { isAbsolute } from 'node:path'
import { RuntimeError } from '../runtime.js'

/**
 * Accepts `unix:///abs/path`, `unix:/abs/path` or a bare absolute path (as the kubelet did before
 * requiring the scheme) and returns the grpc-js target `unix:///abs/path`. CRI on Linux is unix-only.
 */
export function parseCriEndpoint (endpoint: string): string {
  const raw = endpoint.trim()
  let path: string
  if (raw.startsWith('unix://')) path = raw.slice('unix://'.length)
  else if (raw.startsWith('unix:')) path = raw.slice('unix:'.length)
  else if (!raw.includes(':')) path = raw
  else {
    throw new RuntimeError('InvalidArgument',
      `CRI endpoint ${JSON.stringify(endpoint)}: only unix sockets are supported (unix:///path/to/socket)`)
  }
  if (path === '' || !isAbsolute(path)) {
    throw new RuntimeError('InvalidArgument',
      `CRI endpoint ${JSON.stringify(endpoint)}: the socket path must be absolute (unix:///path/to/socket)`)
  }
  return `unix://${path}`
}
