// Host side of the value boundary: the guest's type-tagged CEL values decoded into plain JavaScript.
//
// int and uint become bigint, double number, bytes Uint8Array, list Array, map Map (CEL map keys need
// not be strings), timestamp Date, duration {seconds, nanos}, optional {hasValue, value?}, object a plain
// record of its fields, type its name.

export type TaggedValue =
  | { t: 'int' | 'uint'; v: string }
  | { t: 'double'; v: number | string }
  | { t: 'string'; v: string }
  | { t: 'bool'; v: boolean }
  | { t: 'null' }
  | { t: 'bytes'; v: string }
  | { t: 'list'; v: TaggedValue[] }
  | { t: 'map'; v: [TaggedValue, TaggedValue][] }
  | { t: 'timestamp'; v: string }
  | { t: 'duration'; v: string }
  | { t: 'type'; v: string }
  | { t: 'optional'; v?: TaggedValue }
  | { t: 'object'; type: string; v: Record<string, TaggedValue> }

export interface DurationValue {
  seconds: bigint
  nanos: number
}

export function decodeValue(x: TaggedValue): unknown {
  switch (x.t) {
    case 'int':
    case 'uint':
      return BigInt(x.v)
    case 'double':
      return Number(x.v)
    case 'string':
    case 'bool':
      return x.v
    case 'null':
      return null
    case 'bytes':
      return new Uint8Array(Buffer.from(x.v, 'base64'))
    case 'list':
      return x.v.map(decodeValue)
    case 'map':
      return new Map(x.v.map(([k, v]) => [decodeValue(k), decodeValue(v)]))
    case 'timestamp':
      return new Date(x.v)
    case 'duration':
      return parseDuration(x.v)
    case 'type':
      return x.v
    case 'optional':
      return x.v === undefined ? { hasValue: false } : { hasValue: true, value: decodeValue(x.v) }
    case 'object': {
      const out: Record<string, unknown> = {}
      for (const [k, v] of Object.entries(x.v)) out[k] = decodeValue(v)
      return out
    }
  }
}

function parseDuration(s: string): DurationValue {
  const m = /^(-?)(\d+)(?:\.(\d+))?s$/.exec(s)
  if (!m) return { seconds: 0n, nanos: 0 }
  const sign = m[1] ? -1 : 1
  return { seconds: BigInt(sign) * BigInt(m[2]), nanos: sign * Number((m[3] ?? '').padEnd(9, '0')) }
}
