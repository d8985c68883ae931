// --egress-selector-config-file: the EgressSelectorConfiguration kind (spec document 2 §2.1), read and checked as
// kube-apiserver validates it; every problem is one line naming the file and the field.

import { existsSync, readFileSync } from 'node:fs'
import { parse } from 'yaml'

/** The traffic classes an API server's outbound connections fall in (`master` is read as `controlplane`). */
export type EgressClass = 'controlplane' | 'cluster' | 'etcd'

export interface TcpTransport {
  kind: 'tcp'
  /** `http://host:port` or `https://host:port` of the proxy. */
  url: string
  /** File paths; for https the client pair is required and the CA optional (system roots when absent). */
  caBundle?: string
  clientCert?: string
  clientKey?: string
}

export interface UdsTransport { kind: 'uds'; udsName: string }

export type EgressConnection =
  | { proxyProtocol: 'Direct' }
  | { proxyProtocol: 'HTTPConnect'; transport: TcpTransport | UdsTransport }
  | { proxyProtocol: 'GRPC'; transport: UdsTransport }

export type EgressSettings = Partial<Record<EgressClass, EgressConnection>>

const API_VERSIONS = ['apiserver.orch.io/v1beta1', 'apiserver.orch.io/v1alpha1', 'apiserver.k8s.io/v1beta1', 'apiserver.k8s.io/v1alpha1']
const NAMES = ['controlplane', 'master', 'etcd', 'cluster']
const PROTOCOLS = ['HTTPConnect', 'GRPC', 'Direct']

export class EgressConfigError extends Error {
  readonly code = 'ORCH_ERR_EGRESS_CONFIG'
  override readonly name = 'ConfigError'
}

type Obj = Record<string, unknown>
type Fail = (field: string, msg: string) => never

const isObject = (x: unknown): x is Obj => x !== null && typeof x === 'object' && !Array.isArray(x)
const quoted = (xs: string[]): string => xs.map(x => `"${x}"`).join(', ')

function only (o: Obj, field: string, allowed: string[], fail: Fail): void {
  for (const k of Object.keys(o)) if (!allowed.includes(k)) fail(field === '' ? k : `${field}.${k}`, 'unknown field')
}

function optionalString (o: Obj, key: string, field: string, fail: Fail): string | undefined {
  const v = o[key]
  if (v === undefined || v === '') return undefined
  if (typeof v !== 'string') fail(`${field}.${key}`, 'Invalid value: must be a string')
  return v as string
}

function tcpTransport (t: Obj, field: string, fail: Fail): TcpTransport {
  only(t, field, ['url', 'tlsConfig'], fail)
  const url = optionalString(t, 'url', field, fail)
  if (url === undefined) return fail(`${field}.url`, 'Required value: a proxy URL is needed for a TCP transport')
  const tls = t.tlsConfig === undefined ? {} : t.tlsConfig
  if (!isObject(tls)) return fail(`${field}.tlsConfig`, 'Invalid value: must be an object')
  only(tls, `${field}.tlsConfig`, ['caBundle', 'clientKey', 'clientCert'], fail)
  const caBundle = optionalString(tls, 'caBundle', `${field}.tlsConfig`, fail)
  const clientKey = optionalString(tls, 'clientKey', `${field}.tlsConfig`, fail)
  const clientCert = optionalString(tls, 'clientCert', `${field}.tlsConfig`, fail)
  if (url.startsWith('http://')) {
    for (const [k, v] of [['caBundle', caBundle], ['clientKey', clientKey], ['clientCert', clientCert]] as const) {
      if (v !== undefined) fail(`${field}.tlsConfig.${k}`, `Invalid value: "${v}": must be empty for an http:// proxy URL`)
    }
  } else if (url.startsWith('https://')) {
    if (clientKey === undefined) fail(`${field}.tlsConfig.clientKey`, 'Required value: needed for an https:// proxy URL')
    if (clientCert === undefined) fail(`${field}.tlsConfig.clientCert`, 'Required value: needed for an https:// proxy URL')
    for (const [k, v] of [['caBundle', caBundle], ['clientKey', clientKey], ['clientCert', clientCert]] as const) {
      if (v !== undefined && !existsSync(v)) fail(`${field}.tlsConfig.${k}`, `Invalid value: "${v}": no such file`)
    }
  } else {
    fail(`${field}.url`, `Unsupported value: "${url}": supported connection protocols are http:// and https://`)
  }
  let parsed: URL
  try { parsed = new URL(url) } catch { return fail(`${field}.url`, `Invalid value: "${url}": not a URL`) }
  if (parsed.port === '' && parsed.hostname === '') fail(`${field}.url`, `Invalid value: "${url}": needs a host`)
  return { kind: 'tcp', url, caBundle, clientCert, clientKey }
}

function udsTransport (u: Obj, field: string, fail: Fail): UdsTransport {
  only(u, field, ['udsName'], fail)
  const udsName = optionalString(u, 'udsName', field, fail)
  if (udsName === undefined) return fail(`${field}.udsName`, 'Required value: the socket path is needed for a UDS transport')
  if (udsName.startsWith('unix://')) fail(`${field}.udsName`, `Invalid value: "${udsName}": a socket path, without the unix:// prefix`)
  return { kind: 'uds', udsName }
}

function connectionOf (c: unknown, field: string, fail: Fail): EgressConnection {
  if (!isObject(c)) return fail(field, 'Required value: a connection is needed')
  only(c, field, ['proxyProtocol', 'transport'], fail)
  const protocol = c.proxyProtocol
  if (typeof protocol !== 'string' || !PROTOCOLS.includes(protocol)) {
    return fail(`${field}.proxyProtocol`, `Unsupported value: "${String(protocol ?? '')}": supported values: ${quoted(PROTOCOLS)}`)
  }
  const t = c.transport
  if (protocol === 'Direct') {
    if (t !== undefined && t !== null) fail(`${field}.transport`, 'Invalid value: must be absent for a Direct connection')
    return { proxyProtocol: 'Direct' }
  }
  if (!isObject(t)) return fail(`${field}.transport`, `Required value: needed for the ${protocol} protocol`)
  only(t, `${field}.transport`, ['tcp', 'uds'], fail)
  if (t.tcp !== undefined && t.uds !== undefined) fail(`${field}.transport`, 'Invalid value: tcp and uds are mutually exclusive')
  if (t.tcp === undefined && t.uds === undefined) fail(`${field}.transport`, 'Required value: one of tcp or uds is needed')
  if (protocol === 'GRPC') {
    if (t.tcp !== undefined) fail(`${field}.transport.tcp`, 'Forbidden: the GRPC protocol is not supported over tcp')
    if (!isObject(t.uds)) return fail(`${field}.transport.uds`, 'Invalid value: must be an object')
    return { proxyProtocol: 'GRPC', transport: udsTransport(t.uds, `${field}.transport.uds`, fail) }
  }
  const transport = t.tcp !== undefined
    ? (isObject(t.tcp) ? tcpTransport(t.tcp, `${field}.transport.tcp`, fail) : fail(`${field}.transport.tcp`, 'Invalid value: must be an object'))
    : (isObject(t.uds) ? udsTransport(t.uds, `${field}.transport.uds`, fail) : fail(`${field}.transport.uds`, 'Invalid value: must be an object'))
  return { proxyProtocol: 'HTTPConnect', transport }
}

/** Checks a decoded EgressSelectorConfiguration. */
export function egressSettingsFrom (doc: unknown, file: string): EgressSettings {
  const fail: Fail = (field, msg) => { throw new EgressConfigError(`--egress-selector-config-file ${file}: ${field}: ${msg}`) }
  if (!isObject(doc)) return fail('(root)', 'Invalid value: must hold an EgressSelectorConfiguration object')
  if (!API_VERSIONS.includes(String(doc.apiVersion))) fail('apiVersion', `Unsupported value: "${String(doc.apiVersion)}": supported values: ${quoted(API_VERSIONS)}`)
  if (doc.kind !== 'EgressSelectorConfiguration') fail('kind', `Unsupported value: "${String(doc.kind)}": supported values: "EgressSelectorConfiguration"`)
  only(doc, '', ['apiVersion', 'kind', 'egressSelections'], fail)
  const selections = doc.egressSelections
  if (!Array.isArray(selections)) return fail('egressSelections', 'Required value: a list of egress selections is needed')
  const settings: EgressSettings = {}
  const seen = new Set<string>()
  selections.forEach((s: unknown, i) => {
    const field = `egressSelections[${i}]`
    if (!isObject(s)) return fail(field, 'Invalid value: must be an object')
    only(s, field, ['name', 'connection'], fail)
    const name = s.name
    if (typeof name !== 'string' || !NAMES.includes(name)) return fail(`${field}.name`, `Unsupported value: "${String(name ?? '')}": supported values: ${quoted(NAMES)}`)
    if (seen.has(name)) fail(`${field}.name`, `Duplicate value: "${name}"`)
    seen.add(name)
    const cls: EgressClass = name === 'master' ? 'controlplane' : name as EgressClass
    if (settings[cls] !== undefined) fail(`${field}.name`, 'Invalid value: "master" and "controlplane" name the same selection; give only "controlplane"')
    settings[cls] = connectionOf(s.connection, `${field}.connection`, fail)
  })
  return settings
}

export function loadEgressSelectorConfig (file: string): EgressSettings {
  let text: string
  try { text = readFileSync(file, 'utf8') } catch (err) { throw new EgressConfigError(`--egress-selector-config-file ${file}: ${(err as Error).message}`) }
  let doc: unknown
  try { doc = parse(text) } catch (err) { throw new EgressConfigError(`--egress-selector-config-file ${file}: ${(err as Error).message.split('\n')[0]}`) }
  return egressSettingsFrom(doc, file)
}
