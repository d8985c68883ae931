// Loads and validates the controller manager configuration files (OrchControllerManagerConfiguration, LeaderMigrationConfiguration,
// CloudControllerManagerConfiguration): strict fields, typed values, every error one line naming the file, the field, the value and the rule.

import { readFileSync } from 'node:fs'
import { parse as parseYaml } from 'yaml'
import { parseDuration } from '../args.js'
import { CONTROLLERS } from '../../controllers/registry.js'
import { cloudControllerManager, leaderMigration, orchControllerManager, type FieldType, type Fields } from './schema.js'

type Json = Record<string, any> // eslint-disable-line @typescript-eslint/no-explicit-any

export class ConfigError extends Error {
  constructor (readonly lines: string[]) {
    super(lines.join('\n'))
    this.name = 'ConfigError'
  }
}

const KINDS: Record<string, { apiVersion: string, fields: Fields }> = {
  OrchControllerManagerConfiguration: { apiVersion: 'orchcontrollermanager.config.orch.io/v1alpha1', fields: orchControllerManager },
  CloudControllerManagerConfiguration: { apiVersion: 'cloudcontrollermanager.config.orch.io/v1alpha1', fields: cloudControllerManager },
  LeaderMigrationConfiguration: { apiVersion: 'controllermanager.config.orch.io/v1alpha1', fields: leaderMigration }
}

const describe = (v: unknown): string => JSON.stringify(v)

/** Checks `value` against `fields`, appending `field: value: rule` problems; durations become milliseconds in `out`. */
function walk (value: unknown, fields: Fields, path: string, problems: string[]): Json {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    problems.push(`${path === '' ? '(document)' : path}: ${describe(value)}: must be an object`)
    return {}
  }
  const out: Json = {}
  for (const [k, v] of Object.entries(value)) {
    const p = path === '' ? k : `${path}.${k}`
    const type = fields[k]
    if (type === undefined) { problems.push(`${p}: unknown field`); continue }
    out[k] = check(v, type, p, problems)
  }
  return out
}

function check (v: unknown, type: FieldType, p: string, problems: string[]): unknown {
  if (typeof type === 'object') {
    if ('object' in type) return walk(v, type.object, p, problems)
    if (!Array.isArray(v)) { problems.push(`${p}: ${describe(v)}: must be a list`); return [] }
    return v.map((x, i) => walk(x, type.list, `${p}[${i}]`, problems))
  }
  switch (type) {
    case 'int32':
      if (!Number.isInteger(v) || (v as number) < -(2 ** 31) || (v as number) >= 2 ** 31) problems.push(`${p}: ${describe(v)}: must be a 32-bit integer`)
      return v
    case 'float':
      if (typeof v !== 'number') problems.push(`${p}: ${describe(v)}: must be a number`)
      return v
    case 'bool':
      if (typeof v !== 'boolean') problems.push(`${p}: ${describe(v)}: must be true or false`)
      return v
    case 'string':
      if (typeof v !== 'string') problems.push(`${p}: ${describe(v)}: must be a string`)
      return v
    case 'strings':
      if (!Array.isArray(v) || v.some(x => typeof x !== 'string')) problems.push(`${p}: ${describe(v)}: must be a list of strings`)
      return v
    case 'duration':
      if (typeof v !== 'string') { problems.push(`${p}: ${describe(v)}: must be a duration such as 30s`); return 0 }
      try { return parseDuration(p, v) } catch { problems.push(`${p}: ${describe(v)}: must be a duration such as 30s or 1m0s`); return 0 }
  }
}

/** Rules beyond types: positive concurrency, known controller names, coherent leader election timings. */
function rules (doc: Json, kind: string, problems: string[]): void {
  const known = new Set(Object.keys(CONTROLLERS))
  for (const [section, body] of Object.entries(doc)) {
    if (body === null || typeof body !== 'object' || Array.isArray(body)) continue
    for (const [k, v] of Object.entries(body as Json)) {
      if (k.startsWith('Concurrent') && typeof v === 'number' && v < 1) problems.push(`${section}.${k}: ${v}: must be at least 1`)
    }
  }
  const g = doc.Generic ?? {}
  for (const [i, c] of ((g.Controllers ?? []) as string[]).entries()) {
    const name = c.startsWith('-') ? c.slice(1) : c
    if (c !== '*' && kind === 'OrchControllerManagerConfiguration' && !known.has(name)) {
      problems.push(`Generic.Controllers[${i}]: ${describe(c)}: unknown controller (known: ${[...known].sort().join(', ')})`)
    }
  }
  const le = g.LeaderElection ?? {}
  if (le.leaderElect === true) {
    const [d, r, p] = [le.leaseDuration ?? 15_000, le.renewDeadline ?? 10_000, le.retryPeriod ?? 2_000]
    if (!(d > r)) problems.push(`Generic.LeaderElection.leaseDuration: must be greater than renewDeadline`)
    if (!(r > p * 1.2)) problems.push(`Generic.LeaderElection.renewDeadline: must be greater than retryPeriod*1.2`)
    if (le.resourceLock !== undefined && !['leases', 'endpointsleases', 'configmapsleases'].includes(le.resourceLock)) {
      problems.push(`Generic.LeaderElection.resourceLock: ${describe(le.resourceLock)}: supported values: "leases"`)
    }
  }
  if (kind === 'LeaderMigrationConfiguration' && doc.resourceLock !== undefined && !['leases', 'endpoints'].includes(doc.resourceLock)) {
    problems.push(`resourceLock: ${describe(doc.resourceLock)}: supported values: "leases", "endpoints"`)
  }
}

export interface LoadedConfig { kind: string, config: Json }

/** Reads one configuration file of the given kinds; throws ConfigError with one line per problem. */
export function loadControllerManagerConfig (file: string, accept: string[] = Object.keys(KINDS)): LoadedConfig {
  let doc: unknown
  try {
    doc = parseYaml(readFileSync(file, 'utf8'), { uniqueKeys: true })
  } catch (err) {
    throw new ConfigError([`${file}: ${(err as Error).message.split('\n')[0]}`])
  }
  const kind = (doc as Json | null)?.kind
  const entry = typeof kind === 'string' ? KINDS[kind] : undefined
  if (entry === undefined || !accept.includes(kind as string)) {
    throw new ConfigError([`${file}: kind: ${describe(kind)}: must be ${accept.join(' or ')}`])
  }
  const problems: string[] = []
  if ((doc as Json).apiVersion !== entry.apiVersion) problems.push(`apiVersion: ${describe((doc as Json).apiVersion)}: must be ${entry.apiVersion}`)
  const config = walk(doc, entry.fields, '', problems)
  if (problems.length === 0) rules(config, kind as string, problems)
  if (problems.length > 0) throw new ConfigError(problems.map(p => `${file}: ${p}`))
  return { kind: kind as string, config }
}

/** The `Concurrent*Syncs` settings as workers per controller name. */
export function concurrencyOf (config: Json): Record<string, number> {
  const pick = (section: string, field: string): number | undefined => config[section]?.[field]
  const out: Record<string, number | undefined> = {
    deployment: pick('DeploymentController', 'ConcurrentDeploymentSyncs'),
    replicaset: pick('ReplicaSetController', 'ConcurrentRSSyncs'),
    replicationcontroller: pick('ReplicationController', 'ConcurrentRCSyncs'),
    job: pick('JobController', 'ConcurrentJobSyncs'),
    cronjob: pick('CronJobController', 'ConcurrentCronJobSyncs'),
    endpoint: pick('EndpointController', 'ConcurrentEndpointSyncs'),
    endpointslice: pick('EndpointSliceController', 'ConcurrentServiceEndpointSyncs'),
    serviceaccount: pick('SAController', 'ConcurrentSATokenSyncs'),
    statefulset: pick('StatefulSetController', 'ConcurrentStatefulSetSyncs'),
    daemonset: pick('DaemonSetController', 'ConcurrentDaemonSetSyncs'),
    ttlafterfinished: pick('TTLAfterFinishedController', 'ConcurrentTTLSyncs'),
    resourcequota: pick('ResourceQuotaController', 'ConcurrentResourceQuotaSyncs'),
    horizontalpodautoscaling: pick('HPAController', 'ConcurrentHorizontalPodAutoscalerSyncs')
  }
  return Object.fromEntries(Object.entries(out).filter(([, v]) => v !== undefined)) as Record<string, number>
}
