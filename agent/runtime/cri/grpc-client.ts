// Unary calls to one CRI service over a unix socket: protobufjs codecs from proto/cri/api.proto on a generic grpc-js Client.
import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { Client, credentials, Metadata } from '@grpc/grpc-js'
import protobuf from 'protobufjs'
import { RuntimeError } from '../runtime.js'
import { toRuntimeError } from './errors.js'

export type CriServiceName = 'RuntimeService' | 'ImageService'

/** Plain-object form of a CRI message: camelCase fields, int64 as number, enums as names, bytes as Buffer. */
export type Msg = Record<string, any> // eslint-disable-line @typescript-eslint/no-explicit-any

const toObjectOptions: protobuf.IConversionOptions = {
  longs: Number, enums: String, defaults: true, arrays: true, objects: true
}

/** Finds proto/cri/api.proto from the source tree (agent/runtime/cri) or the build (dist/agent/runtime/cri). */
export function defaultProtoPath (): string {
  for (const rel of ['../../../proto/cri/api.proto', '../../../../proto/cri/api.proto']) {
    const candidate = fileURLToPath(new URL(rel, import.meta.url))
    if (existsSync(candidate)) return candidate
  }
  throw new RuntimeError('Internal', 'CRI client: proto/cri/api.proto not found beside the package')
}

/** Loads and resolves the CRI schema once; share the Root between clients. */
export function loadCriProto (path = defaultProtoPath()): protobuf.Root {
  const root = protobuf.loadSync(path)
  root.resolveAll()
  return root
}

export interface CallOptions {
  /** Milliseconds; undefined or 0 = no deadline. */
  timeoutMs?: number
}

export interface CriGrpcClient {
  call (service: CriServiceName, method: string, request: Msg, opts?: CallOptions): Promise<Msg>
  close (): void
}

interface Codec {
  path: string
  encode: (value: Msg) => Buffer
  decode: (buf: Buffer) => Msg
}

/** Keeps gRPC's default 4 MiB limit from truncating large ListContainers answers (the kubelet uses 16 MiB). */
const maxMessageBytes = 16 * 1024 * 1024

export function createCriGrpcClient (target: string, root: protobuf.Root): CriGrpcClient {
  const client = new Client(target, credentials.createInsecure(), {
    'grpc.max_receive_message_length': maxMessageBytes,
    'grpc.max_send_message_length': maxMessageBytes
  })
  const codecs = new Map<string, Codec>()

  const codecFor = (service: CriServiceName, method: string): Codec => {
    const key = `${service}/${method}`
    let codec = codecs.get(key)
    if (codec !== undefined) return codec
    const m = root.lookupService(`runtime.v1.${service}`).methods[method]
    if (m === undefined || m.resolvedRequestType === null || m.resolvedResponseType === null) {
      throw new RuntimeError('Internal', `CRI client: ${key} is not in proto/cri/api.proto`)
    }
    const req = m.resolvedRequestType
    const res = m.resolvedResponseType
    codec = {
      path: `/runtime.v1.${key}`,
      encode: (value) => Buffer.from(req.encode(req.fromObject(value)).finish()),
      decode: (buf) => res.toObject(res.decode(buf), toObjectOptions)
    }
    codecs.set(key, codec)
    return codec
  }

  return {
    call (service, method, request, opts = {}) {
      const name = `${service}/${method}`
      return new Promise<Msg>((resolve, reject) => {
        let codec: Codec
        try { codec = codecFor(service, method) } catch (err) { reject(toRuntimeError(name, err)); return }
        const callOpts = opts.timeoutMs !== undefined && opts.timeoutMs > 0
          ? { deadline: new Date(Date.now() + opts.timeoutMs) }
          : {}
        client.makeUnaryRequest(codec.path, codec.encode, codec.decode, request, new Metadata(), callOpts,
          (err, value) => {
            if (err !== null) reject(toRuntimeError(name, err))
            else resolve(value ?? {})
          })
      })
    },
    close () { client.close() }
  }
}
