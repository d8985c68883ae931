// The pods/exec, pods/attach and pods/portforward subresources: validates the options, finds the pod's orchlet and
// pipes the client's upgraded connection (SPDY/3.1 or WebSocket) to the orchlet's /exec, /attach or /portForward.
//
// Admission runs first, with operation CONNECT and the options object (PodExecOptions, ...), as kube-apiserver's
// connecter runs it. As kube-apiserver's upgrade-aware proxy: the upgrade request is replayed to the orchlet with the options in the
// kubelet's query form, and the orchlet's answer (101 or an error Status) and every byte after it pass unchanged.
// WebSocket clients speaking v5.channel.k8s.io (exec, attach) or SPDY/3.1+portforward.k8s.io (port-forward) are
// served by the stream translator instead, which reaches the orchlet over SPDY (see stream-translator.ts).

import type { IncomingMessage } from 'node:http'
import type { TLSSocket } from 'node:tls'
import { directEgress, type Egress } from '../egress/egress.js'
import type { Duplex } from 'node:stream'
import { badRequest, StatusError } from '../errors/status-error.js'
import type { Registry, RequestContext } from '../registry/types.js'
import { requestUpgrade } from '../spdy/upgrade.js'
import { chooseContainer, nodeEndpoint, type OrchletTls } from './pod-log.js'
import { createStreamTranslator, offeredSubprotocols, PORT_FORWARD_TUNNEL_PROTOCOL, V5_CHANNEL_PROTOCOL, type OpenUpstream } from './stream-translator.js'

export type PodStreamKind = 'exec' | 'attach' | 'portforward'

export const POD_STREAM_SUBRESOURCES: ReadonlySet<string> = new Set(['exec', 'attach', 'portforward'])

/** The raw connection of an upgrade request, taken over once the request is authorized. */
export interface UpgradeConnection { socket: Duplex; head: Buffer }

export interface PodStreamRequest {
  registry: Registry
  ctx: RequestContext
  version: string
  namespace: string
  name: string
  kind: PodStreamKind
  query: URLSearchParams
  req: IncomingMessage
  /** Undefined for a request without `Connection: Upgrade`, which is refused. */
  upgrade?: UpgradeConnection
}

export interface PodStreamProxy {
  /** Throws StatusError before the connection is handed over; afterwards the bytes flow until either side closes. */
  serve(r: PodStreamRequest): Promise<void>
  close(): void
}

interface PodShape {
  metadata?: { name?: string }
  spec?: { nodeName?: string; containers?: Array<{ name: string }>; initContainers?: Array<{ name: string }>; ephemeralContainers?: Array<{ name: string }> }
  status?: { phase?: string }
}

function bool (q: URLSearchParams, name: string): boolean {
  const v = q.get(name)
  if (v === null || v === '') return false
  if (v === 'true' || v === '1' || v === 'True' || v === 'TRUE') return true
  if (v === 'false' || v === '0' || v === 'False' || v === 'FALSE') return false
  throw badRequest(`invalid value for ${name}: strconv.ParseBool: parsing "${v}": invalid syntax`)
}

const OPTIONS_KIND: Record<PodStreamKind, string> = { exec: 'PodExecOptions', attach: 'PodAttachOptions', portforward: 'PodPortForwardOptions' }

/** The session's options object (v1 PodExecOptions / PodAttachOptions / PodPortForwardOptions) from the query, as admission sees it. */
export interface PodStreamOptions {
  apiVersion: 'v1'
  kind: string
  stdin?: boolean
  stdout?: boolean
  stderr?: boolean
  tty?: boolean
  container?: string
  command?: string[]
  ports?: number[]
  [field: string]: unknown
}

/** Decodes the query into the options object (false and empty fields left out, as Go's omitempty); 400 for a bad value. */
export function podStreamOptions (kind: PodStreamKind, q: URLSearchParams): PodStreamOptions {
  const o: PodStreamOptions = { kind: OPTIONS_KIND[kind], apiVersion: 'v1' }
  if (kind === 'portforward') {
    const ports = q.getAll('ports').flatMap(v => v.split(','))
    for (const p of ports) if (!/^\d+$/.test(p.trim())) throw badRequest(`invalid port ${p}`)
    if (ports.length > 0) o.ports = ports.map(p => Number(p))
    return o
  }
  for (const f of ['stdin', 'stdout', 'stderr', 'tty'] as const) if (bool(q, f)) o[f] = true
  const container = q.get('container') ?? ''
  if (container !== '') o.container = container
  if (kind === 'exec') o.command = q.getAll('command')
  return o
}

const flag = (v: unknown): boolean => v === true

/**
 * The orchlet path and query for one session (the options in the kubelet's form: input, output, error, tty,
 * command, port); Kubernetes' messages for options it refuses.
 */
export function orchletStreamPath (kind: PodStreamKind, namespace: string, pod: PodShape, o: PodStreamOptions): string {
  const name = pod.metadata?.name ?? ''
  const seg = (s: string): string => encodeURIComponent(s)
  const out = new URLSearchParams()
  if (kind === 'portforward') {
    for (const n of o.ports ?? []) {
      if (!Number.isInteger(n) || n < 1 || n > 65535) throw badRequest(`invalid port ${n}`)
      out.append('port', String(n))
    }
    const qs = out.toString()
    return `/portForward/${seg(namespace)}/${seg(name)}${qs === '' ? '' : '?' + qs}`
  }
  const phase = pod.status?.phase
  if (phase === 'Succeeded' || phase === 'Failed') throw badRequest(`cannot ${kind} into a container in a completed pod; current phase is ${phase}`)
  const container = chooseContainer(pod, typeof o.container === 'string' && o.container !== '' ? o.container : undefined)
  const stdin = flag(o.stdin); const stdout = flag(o.stdout); const stderr = flag(o.stderr); const tty = flag(o.tty)
  if (!stdin && !stdout && !stderr) throw badRequest('you must specify at least one of stdin, stdout, stderr')
  if (kind === 'exec') {
    const command = Array.isArray(o.command) ? o.command.map(String) : []
    if (command.length === 0) throw badRequest('you must specify at least one command for the container')
    for (const c of command) out.append('command', c)
  }
  if (stdin) out.set('input', '1')
  if (stdout) out.set('output', '1')
  if (stderr) out.set('error', '1')
  if (tty) out.set('tty', '1')
  return `/${kind}/${seg(namespace)}/${seg(name)}/${seg(container)}?${out.toString()}`
}

function parsed (result: { bytes: Buffer } | Buffer): unknown {
  return JSON.parse((Buffer.isBuffer(result) ? result : result.bytes).toString('utf8'))
}

/** Upgrade headers replayed to the orchlet (credentials and hop headers of the client's connection are not). */
const FORWARDED = /^(connection|upgrade|x-stream-protocol-version|sec-websocket-.*|origin)$/i

export interface PodStreamProxyOptions {
  tls?: OrchletTls
  connectTimeoutMs?: number
  /** Dials the orchlet (the `cluster` selection: direct, or through a proxy or konnectivity tunnel). */
  egress?: Pick<Egress, 'connect'>
  /** TranslateStreamCloseWebsocketRequests: v5.channel.k8s.io exec/attach terminated here (default on). */
  translateWebsockets?: boolean
  /** PortForwardWebsockets: the SPDY-over-WebSocket port-forward tunnel (default on). */
  portForwardWebsockets?: boolean
}

export function createPodStreamProxy (o: PodStreamProxyOptions = {}): PodStreamProxy {
  const tls = o.tls ?? {}
  const connectTimeoutMs = o.connectTimeoutMs ?? 5000
  const open = new Set<Duplex>()
  const egress = o.egress ?? directEgress()
  const translator = createStreamTranslator()

  async function dial (host: string, port: number): Promise<TLSSocket> {
    return await egress.connect('cluster', host, port, { ca: tls.caPem, cert: tls.certPem, key: tls.keyPem, rejectUnauthorized: tls.caPem !== undefined, timeout: connectTimeoutMs })
  }

  async function serve (r: PodStreamRequest): Promise<void> {
    if (r.upgrade === undefined) throw badRequest('Upgrade request required')
    const pods = r.registry.handler('', r.version, 'pods')
    const nodes = r.registry.handler('', r.version, 'nodes')
    if (pods === undefined || nodes === undefined) throw new StatusError(404, 'NotFound', 'the server could not find the requested resource')
    // Admission (operation CONNECT, the options as the object) before the pod is read or its orchlet dialed, as
    // kube-apiserver's connecter runs it; the session then follows the options as admission left them.
    const options = podStreamOptions(r.kind, r.query)
    await r.registry.admitConnect(r.ctx, { group: '', version: r.version, resource: 'pods', subresource: r.kind, namespace: r.namespace, name: r.name }, options)
    const pod = parsed(await pods.get(r.ctx, r.namespace, r.name, {})) as PodShape
    const path = orchletStreamPath(r.kind, r.namespace, pod, options)
    const nodeName = pod.spec?.nodeName ?? ''
    if (nodeName === '') throw badRequest(`pod ${r.name} does not have a host assigned`)
    const node = parsed(await nodes.get(r.ctx, '', nodeName, {})) as Parameters<typeof nodeEndpoint>[0]
    const ep = nodeEndpoint(node)
    const dialBackend = async (): Promise<TLSSocket> => {
      try {
        return await dial(ep.host, ep.port)
      } catch (err) {
        throw new StatusError(500, 'InternalError', `error dialing backend: ${(err as Error).message}`)
      }
    }
    const host = ep.host.includes(':') ? `[${ep.host}]` : ep.host
    const requestLine = [`${r.req.method ?? 'GET'} ${path} HTTP/1.1`, `Host: ${host}:${ep.port}`]

    const offered = offeredSubprotocols(r.req)
    const openSpdy: OpenUpstream = async (streamProtocol) => {
      const socket = await dialBackend()
      const head = [...requestLine, 'Connection: Upgrade', 'Upgrade: SPDY/3.1', `X-Stream-Protocol-Version: ${streamProtocol}`]
      try {
        return { socket, answer: await requestUpgrade(socket, head, connectTimeoutMs * 6) }
      } catch (err) {
        socket.destroy()
        throw new StatusError(500, 'InternalError', `error upgrading the connection to the orchlet: ${(err as Error).message}`)
      }
    }
    if (r.kind !== 'portforward' && o.translateWebsockets !== false && offered.includes(V5_CHANNEL_PROTOCOL)) {
      const flags = { stdin: bool(r.query, 'stdin'), stdout: bool(r.query, 'stdout'), stderr: bool(r.query, 'stderr'), tty: bool(r.query, 'tty') }
      translator.translate(r.req, r.upgrade.socket, r.upgrade.head, flags, openSpdy)
      return
    }
    if (r.kind === 'portforward' && o.portForwardWebsockets !== false && offered.includes(PORT_FORWARD_TUNNEL_PROTOCOL)) {
      await translator.tunnel(r.req, r.upgrade.socket, r.upgrade.head, openSpdy)
      return
    }

    const upstream = await dialBackend()
    const lines = [...requestLine]
    for (let i = 0; i < r.req.rawHeaders.length; i += 2) {
      if (FORWARDED.test(r.req.rawHeaders[i]!)) lines.push(`${r.req.rawHeaders[i]!}: ${r.req.rawHeaders[i + 1]!}`)
    }
    upstream.write(lines.join('\r\n') + '\r\n\r\n')
    if (r.upgrade.head.length > 0) upstream.write(r.upgrade.head)
    const client = r.upgrade.socket
    open.add(client)
    const end = (): void => { open.delete(client); client.destroy(); upstream.destroy() }
    for (const s of [client, upstream]) { s.on('error', end); s.on('close', end) }
    client.pipe(upstream)
    upstream.pipe(client)
  }

  return {
    serve,
    close () {
      for (const s of [...open]) s.destroy()
      translator.close()
    }
  }
}
