// Service strategy: ClusterIP allocation from a CIDR (`None` = headless) and NodePort allocation, released on delete.
// The allocators start from the stored services (lazily, once) so they survive restarts.

import type { Store } from '../../storage/store.js'
import type { FieldError } from '../../schema/types.js'
import { invalid } from '../../errors/status-error.js'
import type { Strategy } from '../strategy.js'
import { validateServicePorts } from './workload-validation.js'
import { parseJson, type Obj } from '../object-meta.js'

export interface ServiceStrategyOptions {
  store: Store
  /** Services' key prefix (all namespaces). */
  prefix: string
  serviceCIDR?: string
  nodePortRange?: [number, number]
}

interface Port { port?: number, nodePort?: number }
interface ServiceSpec { type?: string, clusterIP?: string, clusterIPs?: string[], ports?: Port[], ipFamilies?: string[], ipFamilyPolicy?: string }

function ipToInt (ip: string): number | undefined {
  const p = ip.split('.')
  if (p.length !== 4 || p.some(x => !/^\d{1,3}$/.test(x) || Number(x) > 255)) return undefined
  return ((Number(p[0]) << 24) >>> 0) + (Number(p[1]) << 16) + (Number(p[2]) << 8) + Number(p[3])
}
const intToIp = (n: number): string => [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.')

export function parseCIDR (cidr: string): { base: number, size: number } {
  const [ip, bits] = cidr.split('/')
  const b = Number(bits)
  const n = ipToInt(ip)
  if (n === undefined || !Number.isInteger(b) || b < 8 || b > 30) throw new Error(`invalid service CIDR ${cidr}`)
  const size = 2 ** (32 - b)
  return { base: n - (n % size), size }
}

const wantsNodePorts = (t: string | undefined): boolean => t === 'NodePort' || t === 'LoadBalancer'

export function createServiceStrategy (o: ServiceStrategyOptions): Strategy {
  const { base, size } = parseCIDR(o.serviceCIDR ?? '10.96.0.0/12')
  const [portLo, portHi] = o.nodePortRange ?? [30000, 32767]
  const ips = new Set<number>()
  const ports = new Set<number>()
  let loaded: Promise<void> | undefined
  const load = async (): Promise<void> => {
    const res = await o.store.list(o.prefix)
    for (const kv of res.items) reserveFrom(parseJson(kv.value).spec as ServiceSpec | undefined)
  }
  const reserveFrom = (spec: ServiceSpec | undefined): void => {
    const ip = spec?.clusterIP !== undefined ? ipToInt(spec.clusterIP) : undefined
    if (ip !== undefined) ips.add(ip)
    for (const p of spec?.ports ?? []) if (p.nodePort !== undefined) ports.add(p.nodePort)
  }
  const pick = (lo: number, count: number, used: Set<number>): number | undefined => {
    const start = Math.floor(Math.random() * count)
    for (let i = 0; i < count; i++) {
      const v = lo + ((start + i) % count)
      if (!used.has(v)) return v
    }
    return undefined
  }
  const allocate = async (obj: Obj, old: Obj | undefined, dryRun: boolean): Promise<void> => {
    await (loaded ??= load())
    const errors: FieldError[] = []
    assign(obj, old, dryRun, errors)
    if (errors.length > 0) {
      throw invalid('', 'Service', String((obj.metadata as Obj | undefined)?.name ?? ''),
        errors.map(e => ({ reason: e.type, field: e.field, message: e.message })))
    }
  }

  const assign = (obj: Obj, old: Obj | undefined, dryRun: boolean, errors: FieldError[]): void => {
    const spec = (obj.spec ??= {}) as ServiceSpec
    const oldSpec = old?.spec as ServiceSpec | undefined
    spec.type ??= 'ClusterIP'
    if (spec.type === 'ExternalName') return
    if ((spec.clusterIP === undefined || spec.clusterIP === '') && oldSpec?.clusterIP !== undefined) spec.clusterIP = oldSpec.clusterIP
    if (spec.clusterIP === undefined || spec.clusterIP === '') {
      const n = pick(base + 1, size - 2, ips)
      if (n === undefined) { errors.push({ type: 'FieldValueInvalid', field: 'spec.clusterIPs', message: 'Internal error: failed to allocate a serviceIP: range is full' }); return }
      spec.clusterIP = intToIp(n)
      if (!dryRun) ips.add(n)
    } else if (spec.clusterIP !== 'None' && spec.clusterIP !== oldSpec?.clusterIP) {
      const n = ipToInt(spec.clusterIP)
      if (n === undefined || n <= base || n >= base + size - 1) {
        errors.push({ type: 'FieldValueInvalid', field: 'spec.clusterIPs', message: `Invalid value: []string{"${spec.clusterIP}"}: failed to allocate IP ${spec.clusterIP}: the provided IP (${spec.clusterIP}) is not in the valid range` })
      } else if (ips.has(n)) {
        errors.push({ type: 'FieldValueInvalid', field: 'spec.clusterIPs', message: `Invalid value: []string{"${spec.clusterIP}"}: failed to allocate IP ${spec.clusterIP}: provided IP is already allocated` })
      } else if (!dryRun) ips.add(n)
    }
    spec.clusterIPs = [spec.clusterIP]
    if (spec.clusterIP !== 'None') { spec.ipFamilies ??= ['IPv4']; spec.ipFamilyPolicy ??= 'SingleStack' }
    if (!wantsNodePorts(spec.type)) return
    (spec.ports ?? []).forEach((p, i) => {
      const prev = oldSpec?.ports?.find(q => q.port === p.port)?.nodePort
      if (p.nodePort === undefined && prev !== undefined) p.nodePort = prev
      if (p.nodePort === undefined) {
        const n = pick(portLo, portHi - portLo + 1, ports)
        if (n === undefined) { errors.push({ type: 'FieldValueInvalid', field: `spec.ports[${i}].nodePort`, message: 'Internal error: failed to allocate a nodePort: range is full' }); return }
        p.nodePort = n
        if (!dryRun) ports.add(n)
      } else if (p.nodePort !== prev) {
        if (p.nodePort < portLo || p.nodePort > portHi) {
          errors.push({ type: 'FieldValueInvalid', field: `spec.ports[${i}].nodePort`, message: `Invalid value: ${p.nodePort}: provided port is not in the valid range. The range of valid ports is ${portLo}-${portHi}` })
        } else if (ports.has(p.nodePort)) {
          errors.push({ type: 'FieldValueInvalid', field: `spec.ports[${i}].nodePort`, message: `Invalid value: ${p.nodePort}: provided port is already allocated` })
        } else if (!dryRun) ports.add(p.nodePort)
      }
    })
  }

  return {
    validate: validateServicePorts,
    async prepareForCreate (obj, sc) { await allocate(obj, undefined, sc.ctx.dryRun) },
    async prepareForUpdate (obj, old, sc) { await allocate(obj, old, sc.ctx.dryRun) },
    afterDelete (obj) {
      const spec = obj.spec as ServiceSpec | undefined
      const ip = spec?.clusterIP !== undefined ? ipToInt(spec.clusterIP) : undefined
      if (ip !== undefined) ips.delete(ip)
      for (const p of spec?.ports ?? []) if (p.nodePort !== undefined) ports.delete(p.nodePort)
    }
  }
}
