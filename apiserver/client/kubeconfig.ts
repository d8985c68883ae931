// Reads a kubeconfig-format connection file (--orchconfig, --kubeconfig) into one connection; shared by the orchlet and the controllers.

import { readFileSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import { parse as parseYaml } from 'yaml'

export interface Connection {
  server: string
  caPem?: Buffer
  insecureSkipTlsVerify: boolean
  token?: string
  clientCertPem?: Buffer
  clientKeyPem?: Buffer
}

export class KubeconfigError extends Error {
  constructor (file: string, why: string) {
    super(`invalid connection file ${file}: ${why}`)
    this.name = 'KubeconfigError'
  }
}

interface Named<T> { name?: string; [key: string]: unknown; value?: T }

function pick (list: unknown, name: string | undefined, field: string, file: string): Record<string, unknown> {
  if (!Array.isArray(list) || list.length === 0) throw new KubeconfigError(file, `no ${field}s`)
  const entry = (name === undefined ? list[0] : list.find((e: Named<unknown>) => e?.name === name)) as Record<string, unknown> | undefined
  if (entry === undefined) throw new KubeconfigError(file, `${field} "${name}" not found`)
  const inner = entry[field]
  if (inner === null || typeof inner !== 'object') throw new KubeconfigError(file, `${field} "${String(entry.name)}" has no ${field} section`)
  return inner as Record<string, unknown>
}

function material (section: Record<string, unknown>, dataKey: string, fileKey: string, base: string): Buffer | undefined {
  const data = section[dataKey]
  if (typeof data === 'string' && data !== '') return Buffer.from(data, 'base64')
  const path = section[fileKey]
  if (typeof path === 'string' && path !== '') return readFileSync(resolve(base, path))
  return undefined
}

/** Parses the file; relative certificate paths resolve against the file's folder, as kubectl does. */
export function loadKubeconfig (file: string): Connection {
  let doc: Record<string, unknown>
  try {
    const parsed: unknown = parseYaml(readFileSync(file, 'utf8'))
    if (parsed === null || typeof parsed !== 'object') throw new Error('not a mapping')
    doc = parsed as Record<string, unknown>
  } catch (err) {
    throw new KubeconfigError(file, (err as Error).message)
  }
  const contexts = doc.contexts
  const current = typeof doc['current-context'] === 'string' ? doc['current-context'] : undefined
  let clusterName: string | undefined
  let userName: string | undefined
  if (Array.isArray(contexts) && contexts.length > 0) {
    const ctx = pick(contexts, current, 'context', file)
    clusterName = typeof ctx.cluster === 'string' ? ctx.cluster : undefined
    userName = typeof ctx.user === 'string' ? ctx.user : undefined
  }
  const cluster = pick(doc.clusters, clusterName, 'cluster', file)
  const server = cluster.server
  if (typeof server !== 'string' || !/^https?:\/\//.test(server)) throw new KubeconfigError(file, 'cluster.server must be an http(s) URL')
  const base = dirname(resolve(file))
  const conn: Connection = {
    server: server.replace(/\/+$/, ''),
    caPem: material(cluster, 'certificate-authority-data', 'certificate-authority', base),
    insecureSkipTlsVerify: cluster['insecure-skip-tls-verify'] === true
  }
  const users = doc.users
  if (Array.isArray(users) && users.length > 0) {
    const user = pick(users, userName, 'user', file)
    if (typeof user.token === 'string') conn.token = user.token
    else if (typeof user.tokenFile === 'string') conn.token = readFileSync(resolve(base, user.tokenFile), 'utf8').trim()
    conn.clientCertPem = material(user, 'client-certificate-data', 'client-certificate', base)
    conn.clientKeyPem = material(user, 'client-key-data', 'client-key', base)
  }
  return conn
}
