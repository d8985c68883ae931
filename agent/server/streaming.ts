// The orchlet's streaming endpoints (/exec, /attach, /portForward): asks the pod's runtime for a streaming URL
// (CRI Exec, Attach, PortForward) and pipes the client's upgraded connection to the runtime's streaming server.
//
// The pipe is protocol-agnostic: the client's upgrade request (SPDY/3.1 or WebSocket) is replayed to the
// streaming server, whose answer (101 or an error) and every byte after it go back unchanged, as the kubelet's
// upgrade-aware proxy does.

import type { IncomingMessage } from 'node:http'
import { connect, type Socket } from 'node:net'
import type { Duplex } from 'node:stream'
import { RuntimeError, type ContainerRuntime, type StreamingRequest } from '../runtime/runtime.js'

export type StreamKind = 'exec' | 'attach' | 'portforward'

export interface StreamTarget { kind: StreamKind; namespace: string; pod: string; container?: string }

/** The runtime and IDs behind one pod (undefined when the orchlet does not run that pod). */
export type RuntimeIdsLookup = (namespace: string, pod: string, container?: string) => { runtime: ContainerRuntime; sandboxId?: string; containerId?: string } | undefined

/** A failure answered as a Status before any upgrade. */
export class StreamingError extends Error {
  constructor (readonly code: number, readonly reason: string, message: string) { super(message) }
}

/**
 * The kubelet's paths: /exec|/attach/{namespace}/{pod}[/{uid}]/{container}, /portForward/{namespace}/{pod}[/{uid}].
 * Undefined for any other path.
 */
export function parseStreamingPath (pathname: string): StreamTarget | undefined {
  const parts = pathname.split('/').slice(1).map(p => decodeURIComponent(p))
  if (parts[parts.length - 1] === '') parts.pop()
  const [first, namespace, pod] = parts
  if (namespace === undefined || namespace === '' || pod === undefined || pod === '') return undefined
  if (first === 'portForward' && (parts.length === 3 || parts.length === 4)) return { kind: 'portforward', namespace, pod }
  if ((first === 'exec' || first === 'attach') && (parts.length === 4 || parts.length === 5)) {
    const container = parts[parts.length - 1]!
    if (container === '') return undefined
    return { kind: first, namespace, pod, container }
  }
  return undefined
}

const flag = (q: URLSearchParams, name: string): boolean => {
  const v = q.get(name)
  return v === '1' || v === 'true'
}

/** The CRI request of one session from the path and the kubelet's query (command, input, output, error, tty, port). */
export function streamingRequest (t: StreamTarget, q: URLSearchParams, lookup: RuntimeIdsLookup): { runtime: ContainerRuntime; request: StreamingRequest } {
  const ids = lookup(t.namespace, t.pod, t.container)
  if (ids === undefined) throw new StreamingError(404, 'NotFound', `pod "${t.pod}" in namespace "${t.namespace}" not found`)
  if (t.kind === 'portforward') {
    if (ids.sandboxId === undefined) throw new StreamingError(500, 'InternalError', `pod "${t.pod}" has no running sandbox`)
    const ports = q.getAll('port').map(Number).filter(p => Number.isInteger(p) && p > 0 && p < 65536)
    return { runtime: ids.runtime, request: { kind: 'portforward', podSandboxId: ids.sandboxId, ports } }
  }
  if (ids.containerId === undefined) throw new StreamingError(500, 'InternalError', `container not found ("${t.container ?? ''}")`)
  const tty = flag(q, 'tty')
  const flags = { stdin: flag(q, 'input'), stdout: flag(q, 'output'), stderr: flag(q, 'error') && !tty, tty }
  if (t.kind === 'attach') return { runtime: ids.runtime, request: { kind: 'attach', containerId: ids.containerId, ...flags } }
  const cmd = q.getAll('command')
  if (cmd.length === 0) throw new StreamingError(400, 'BadRequest', 'you must specify at least one command for the container')
  return { runtime: ids.runtime, request: { kind: 'exec', containerId: ids.containerId, cmd, ...flags } }
}

/** Asks the runtime for the session's URL; a runtime without streaming is a clear 400 naming it. */
export async function streamingUrl (runtime: ContainerRuntime, request: StreamingRequest): Promise<string> {
  const what = request.kind === 'portforward' ? 'port-forward' : request.kind
  if (runtime.runtime.streamingUrl === undefined) throw new StreamingError(400, 'BadRequest', `${what} is not supported by the ${runtime.name} runtime`)
  try {
    return await runtime.runtime.streamingUrl(request)
  } catch (err) {
    if (err instanceof RuntimeError && err.code === 'Unimplemented') throw new StreamingError(400, 'BadRequest', `${what} is not supported by the ${runtime.name} runtime: ${err.message}`)
    if (err instanceof RuntimeError && err.code === 'NotFound') throw new StreamingError(404, 'NotFound', err.message)
    throw new StreamingError(500, 'InternalError', `${what} failed: ${(err as Error).message}`)
  }
}

/** Writes a Status answer on a socket that has not been upgraded, then closes it. */
export function answerStatus (socket: Duplex, code: number, reason: string, message: string): void {
  const body = JSON.stringify({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code })
  if (!socket.writable) { socket.destroy(); return }
  socket.end(`HTTP/1.1 ${code} ${reason}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`)
}

/** Headers that belong to one hop and are not replayed. */
const HOP_HEADERS = new Set(['host', 'authorization', 'proxy-authorization', 'cookie', 'content-length', 'transfer-encoding', 'keep-alive'])

/** Replays the upgrade request to `target` (http://host:port/path) and pipes both directions until either side ends. */
export async function pipeUpgrade (req: IncomingMessage, client: Duplex, head: Buffer, target: string): Promise<void> {
  const u = new URL(target)
  if (u.protocol !== 'http:') throw new StreamingError(500, 'InternalError', `unsupported streaming URL ${target}`)
  const upstream = await new Promise<Socket>((resolve, reject) => {
    const s = connect({ host: u.hostname.replace(/^\[|\]$/g, ''), port: Number(u.port || 80) })
    s.once('connect', () => { s.off('error', reject); resolve(s) })
    s.once('error', reject)
  }).catch((err: Error) => { throw new StreamingError(500, 'InternalError', `error dialing the streaming server ${u.host}: ${err.message}`) })
  const lines = [`${req.method ?? 'GET'} ${u.pathname}${u.search} HTTP/1.1`, `Host: ${u.host}`]
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    const name = req.rawHeaders[i]!
    if (!HOP_HEADERS.has(name.toLowerCase())) lines.push(`${name}: ${req.rawHeaders[i + 1]!}`)
  }
  upstream.write(lines.join('\r\n') + '\r\n\r\n')
  if (head.length > 0) upstream.write(head)
  splice(client, upstream)
}

/** Pipes two sockets into each other; either side closing or failing ends both. */
export function splice (a: Duplex, b: Duplex): void {
  const end = (): void => { a.destroy(); b.destroy() }
  a.on('error', end); b.on('error', end)
  a.on('close', end); b.on('close', end)
  a.pipe(b)
  b.pipe(a)
}
