// Loads etcd's own v3 API protos (proto/etcd) into one protobufjs Root, skipping their Go-only option imports.
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import protobuf from 'protobufjs'

/** Plain-object form of an etcd message: camelCase fields, int64 as number, enums as names, bytes as Buffer. */
export type Msg = Record<string, any> // eslint-disable-line @typescript-eslint/no-explicit-any

export const toObjectOptions: protobuf.IConversionOptions = {
  longs: Number, enums: String, defaults: true, arrays: true, objects: true
}

/** Finds proto/ from the source tree (apiserver/storage/etcd) or the build (dist/apiserver/storage/etcd). */
export function defaultProtoDir (): string {
  for (const rel of ['../../../proto', '../../../../proto']) {
    const candidate = fileURLToPath(new URL(rel, import.meta.url))
    if (existsSync(join(candidate, 'etcd/etcdserver/etcdserverpb/rpc.proto'))) return candidate
  }
  throw new Error('etcd client: proto/etcd/etcdserver/etcdserverpb/rpc.proto not found beside the package')
}

/**
 * rpc.proto imports gogoproto and google.api annotations only for Go code generation and the HTTP gateway; they
 * carry no message the wire uses, so the loader skips them (protobufjs skips an import whose path resolves to null).
 */
export function loadEtcdProto (dir = defaultProtoDir()): protobuf.Root {
  const root = new protobuf.Root()
  root.resolvePath = (origin, target) => {
    if (target.startsWith('gogoproto/') || target.startsWith('google/')) return null as unknown as string
    if (target.startsWith('etcd/')) return join(dir, target)
    return protobuf.util.path.resolve(origin, target)
  }
  root.loadSync('etcd/etcdserver/etcdserverpb/rpc.proto')
  root.resolveAll()
  return root
}
