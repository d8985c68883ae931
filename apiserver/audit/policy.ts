// Audit policies (`audit.orch.io/v1` Policy, also `audit.k8s.io/v1`): their shape, decoding from YAML or JSON, and validation.

import { readFile } from 'node:fs/promises'
import { parse as parseYaml } from 'yaml'
import { child, formatFieldErrors, index, invalid, notSupported, required } from '../schema/field-errors.js'
import type { FieldError } from '../schema/types.js'

export const LEVELS = ['None', 'Metadata', 'Request', 'RequestResponse'] as const
export type Level = typeof LEVELS[number]
export const STAGES = ['RequestReceived', 'ResponseStarted', 'ResponseComplete', 'Panic'] as const
export type Stage = typeof STAGES[number]

/** The API versions a policy file may declare (orch's own group, and Kubernetes' for files written for it). */
export const POLICY_API_VERSIONS = ['audit.orch.io/v1', 'audit.k8s.io/v1']

export interface GroupResources {
  /** '' is the core group. */
  group: string
  /** `pods`, `pods/log`, `*`, `pods/*`, or `*` then `/status` (any resource's status); none = every resource of the group. */
  resources: string[]
  /** Names of objects; none = any. */
  resourceNames: string[]
}

export interface PolicyRule {
  level: Level
  users: string[]
  userGroups: string[]
  verbs: string[]
  resources: GroupResources[]
  /** '' matches cluster-scoped resources. */
  namespaces: string[]
  /** Paths of non-resource requests; a trailing `*` matches any rest. */
  nonResourceURLs: string[]
  omitStages: Stage[]
  /** Absent: the policy's setting. */
  omitManagedFields?: boolean
}

export interface Policy {
  omitStages: Stage[]
  omitManagedFields: boolean
  rules: PolicyRule[]
}

/** A policy file that cannot be used; the message names the file and every field at fault. */
export class PolicyError extends Error {
  override readonly name = 'PolicyError'
}

type Obj = Record<string, unknown>
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v)

/** Reads a field that must be a list of strings; a wrong shape is recorded in `errs`. */
function strings (o: Obj, name: string, path: string, errs: FieldError[]): string[] {
  const v = o[name]
  if (v === undefined || v === null) return []
  if (!Array.isArray(v) || v.some(s => typeof s !== 'string')) {
    errs.push(invalid(child(path, name), v, 'must be a list of strings'))
    return []
  }
  return v as string[]
}

function unknownFields (o: Obj, known: string[], path: string, errs: FieldError[]): void {
  // A misspelt selector (`resource:` for `resources:`) would silently widen a rule, so it is refused.
  for (const k of Object.keys(o)) if (!known.includes(k)) errs.push({ type: 'FieldValueNotSupported', field: child(path, k), message: 'unknown field' })
}

const RULE_FIELDS = ['level', 'users', 'userGroups', 'verbs', 'resources', 'namespaces', 'nonResourceURLs', 'omitStages', 'omitManagedFields']
const POLICY_FIELDS = ['apiVersion', 'kind', 'metadata', 'omitStages', 'omitManagedFields', 'rules']
// Kubernetes' NameIsDNSSubdomain: lower-case RFC 1123 labels joined by dots, at most 253 characters.
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/

function stagesOf (o: Obj, path: string, errs: FieldError[]): Stage[] {
  const list = strings(o, 'omitStages', path, errs)
  list.forEach((s, i) => {
    if (!(STAGES as readonly string[]).includes(s)) errs.push(invalid(index(child(path, 'omitStages'), i), s, `allowed stages are ${STAGES.join(',')}`))
  })
  return list as Stage[]
}

function boolOf (o: Obj, name: string, path: string, errs: FieldError[]): boolean | undefined {
  const v = o[name]
  if (v === undefined || v === null) return undefined
  if (typeof v !== 'boolean') { errs.push(invalid(child(path, name), v, 'must be true or false')); return undefined }
  return v
}

function groupResourcesOf (raw: unknown, path: string, errs: FieldError[]): GroupResources | undefined {
  if (!isObj(raw)) { errs.push(invalid(path, raw, 'must be an object with group, resources and resourceNames')); return undefined }
  unknownFields(raw, ['group', 'resources', 'resourceNames'], path, errs)
  const group = raw.group ?? ''
  if (typeof group !== 'string') { errs.push(invalid(child(path, 'group'), group, 'must be a string')); return undefined }
  if (group !== '' && (group.length > 253 || !DNS_SUBDOMAIN.test(group))) {
    errs.push(invalid(child(path, 'group'), group, "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character"))
  }
  const resources = strings(raw, 'resources', path, errs)
  const resourceNames = strings(raw, 'resourceNames', path, errs)
  if (resourceNames.length > 0 && resources.length === 0) errs.push(invalid(child(path, 'resourceNames'), resourceNames, 'using resourceNames requires at least one resource'))
  return { group, resources, resourceNames }
}

function ruleOf (raw: unknown, path: string, errs: FieldError[]): PolicyRule | undefined {
  if (!isObj(raw)) { errs.push(invalid(path, raw, 'must be an object')); return undefined }
  unknownFields(raw, RULE_FIELDS, path, errs)
  const level = raw.level
  if (level === undefined || level === null || level === '') errs.push(required(child(path, 'level')))
  else if (!(LEVELS as readonly unknown[]).includes(level)) errs.push(notSupported(child(path, 'level'), level, [...LEVELS]))
  const nonResourceURLs = strings(raw, 'nonResourceURLs', path, errs)
  nonResourceURLs.forEach((url, i) => {
    if (url === '*') return
    const at = index(child(path, 'nonResourceURLs'), i)
    if (!url.startsWith('/')) errs.push(invalid(at, url, "non-resource URL rules must begin with a '/' character"))
    if (url !== '' && url.slice(0, -1).includes('*')) errs.push(invalid(at, url, "non-resource URL wildcards '*' must be the final character of the rule"))
  })
  const resources: GroupResources[] = []
  const rawResources = raw.resources ?? []
  if (!Array.isArray(rawResources)) errs.push(invalid(child(path, 'resources'), rawResources, 'must be a list'))
  else {
    rawResources.forEach((r, i) => {
      const gr = groupResourcesOf(r, index(child(path, 'resources'), i), errs)
      if (gr !== undefined) resources.push(gr)
    })
  }
  const namespaces = strings(raw, 'namespaces', path, errs)
  if (nonResourceURLs.length > 0 && (resources.length > 0 || namespaces.length > 0)) {
    errs.push(invalid(child(path, 'nonResourceURLs'), nonResourceURLs, 'rules cannot apply to both regular resources and non-resource URLs'))
  }
  const rule: PolicyRule = {
    level: level as Level,
    users: strings(raw, 'users', path, errs),
    userGroups: strings(raw, 'userGroups', path, errs),
    verbs: strings(raw, 'verbs', path, errs),
    resources,
    namespaces,
    nonResourceURLs,
    omitStages: stagesOf(raw, path, errs)
  }
  const omf = boolOf(raw, 'omitManagedFields', path, errs)
  if (omf !== undefined) rule.omitManagedFields = omf
  return rule
}

/** Checks a decoded policy document; throws PolicyError listing every problem (field paths as Kubernetes prints them). */
export function policyFromObject (doc: unknown, source = 'policy'): Policy {
  if (!isObj(doc)) throw new PolicyError(`failed decoding ${source}: the document must be an object (a Policy)`)
  if (!POLICY_API_VERSIONS.includes(doc.apiVersion as string)) {
    throw new PolicyError(`failed decoding ${source}: apiVersion ${JSON.stringify(doc.apiVersion ?? '')} is not supported: want one of ${POLICY_API_VERSIONS.join(', ')}`)
  }
  if (doc.kind !== 'Policy') throw new PolicyError(`failed decoding ${source}: kind ${JSON.stringify(doc.kind ?? '')} is not supported: want Policy`)
  const errs: FieldError[] = []
  unknownFields(doc, POLICY_FIELDS, '', errs)
  const rawRules = doc.rules ?? []
  const rules: PolicyRule[] = []
  if (!Array.isArray(rawRules)) errs.push(invalid('rules', rawRules, 'must be a list'))
  else {
    rawRules.forEach((r, i) => {
      const rule = ruleOf(r, index('rules', i), errs)
      if (rule !== undefined) rules.push(rule)
    })
  }
  const policy: Policy = { omitStages: stagesOf(doc, '', errs), omitManagedFields: boolOf(doc, 'omitManagedFields', '', errs) ?? false, rules }
  if (errs.length > 0) throw new PolicyError(`loaded illegal policy from ${source}: ${formatFieldErrors(errs)}`)
  if (rules.length === 0) throw new PolicyError(`loaded illegal policy with 0 rules from ${source}`)
  return policy
}

/** Parses a policy file's text (YAML or JSON, one document). */
export function parsePolicy (text: string, source = 'policy'): Policy {
  let doc: unknown
  try {
    doc = parseYaml(text, { prettyErrors: false })
  } catch (err) {
    throw new PolicyError(`failed decoding ${source}: ${(err as Error).message.split('\n')[0]}`)
  }
  if (doc === null || doc === undefined) throw new PolicyError(`failed decoding ${source}: the file is empty`)
  return policyFromObject(doc, source)
}

/** Reads and checks `--audit-policy-file`; the error says which file and why. */
export async function loadPolicyFile (path: string): Promise<Policy> {
  let text: string
  try {
    text = await readFile(path, 'utf8')
  } catch (err) {
    throw new PolicyError(`failed to read audit policy file ${JSON.stringify(path)}: ${(err as Error).message}`)
  }
  return parsePolicy(text, `file ${JSON.stringify(path)}`)
}
