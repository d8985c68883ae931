// Mutating/ValidatingWebhookConfiguration: Kubernetes' defaults and validation (admissionregistration/v1), match conditions compiled on write.

import type { FieldError } from '../../schema/types.js'
import { child, duplicate, index, invalid, notSupported, required, tooMany } from '../../schema/field-errors.js'
import type { Strategy } from '../strategy.js'
import type { Obj } from '../object-meta.js'
import type { ExpressionEvaluator, PooledProgram } from '../../../sandbox/expression-evaluator.js'
import { compileExpression } from '../../auth/config/cel-compile.js'
import { splitPemBundle } from '../../pki/certs.js'
import { isDNS1123Subdomain, isQualifiedName } from '../../schema/metadata.js'
import { matchConditionEnvironment } from '../../admission/webhooks/match-environment.js'

type Webhook = Record<string, any>
const OPERATIONS = ['*', 'CREATE', 'UPDATE', 'DELETE', 'CONNECT']
const MAX_MATCH_CONDITIONS = 64

/** The v1 defaults kube-apiserver sets (SetDefaults_*Webhook, SetDefaults_Rule). */
export function defaultWebhooks (obj: Obj, mutating: boolean): void {
  for (const w of (Array.isArray(obj.webhooks) ? obj.webhooks : []) as Webhook[]) {
    if (w === null || typeof w !== 'object') continue
    w.failurePolicy ??= 'Fail'
    w.matchPolicy ??= 'Equivalent'
    w.namespaceSelector ??= {}
    w.objectSelector ??= {}
    w.timeoutSeconds ??= 10
    if (mutating) w.reinvocationPolicy ??= 'Never'
    if (w.clientConfig?.service !== undefined && w.clientConfig.service !== null) w.clientConfig.service.port ??= 443
    for (const r of (Array.isArray(w.rules) ? w.rules : []) as Webhook[]) if (r !== null && typeof r === 'object') r.scope ??= '*'
  }
}

function validateRule (r: Webhook, at: string, errs: FieldError[]): void {
  for (const [f, list] of [['operations', r.operations], ['apiGroups', r.apiGroups], ['apiVersions', r.apiVersions], ['resources', r.resources]] as const) {
    if (!Array.isArray(list) || list.length === 0) { errs.push(required(child(at, f))); continue }
    if (list.length > 1 && list.includes('*')) errs.push(invalid(child(at, f), list, "if '*' is present, must not specify other " + (f === 'apiGroups' ? 'API groups' : f === 'apiVersions' ? 'API versions' : f)))
  }
  for (const [i, op] of ((r.operations ?? []) as string[]).entries()) if (!OPERATIONS.includes(op)) errs.push(notSupported(index(child(at, 'operations'), i), op, OPERATIONS))
  for (const [i, v] of ((r.apiVersions ?? []) as string[]).entries()) if (v === '') errs.push(required(index(child(at, 'apiVersions'), i)))
  for (const [i, res] of ((r.resources ?? []) as string[]).entries()) {
    if (res === '') errs.push(required(index(child(at, 'resources'), i)))
    else if (res.split('/').length > 2 || res.startsWith('/') || res.endsWith('/')) errs.push(invalid(index(child(at, 'resources'), i), res, 'must be resource or resource/subresource'))
  }
  if (r.scope !== undefined && !['*', 'Cluster', 'Namespaced'].includes(r.scope)) errs.push(notSupported(child(at, 'scope'), r.scope, ['*', 'Cluster', 'Namespaced']))
}

function validateClientConfig (c: Webhook | undefined, at: string, errs: FieldError[]): void {
  if (c === undefined || c === null) { errs.push(required(at, 'exactly one of url or service is required')); return }
  const hasUrl = typeof c.url === 'string'
  const hasService = c.service !== undefined && c.service !== null
  if (hasUrl === hasService) { errs.push(required(at, 'exactly one of url or service is required')); return }
  if (hasUrl) {
    let u: URL | undefined
    try { u = new URL(c.url) } catch { errs.push(invalid(child(at, 'url'), c.url, 'host must be specified')) }
    if (u !== undefined) {
      if (u.protocol !== 'https:') errs.push(invalid(child(at, 'url'), c.url, "'https' is the only allowed URL scheme"))
      if (u.username !== '' || u.password !== '') errs.push(invalid(child(at, 'url'), c.url, 'user information is not permitted in the URL'))
      if (u.hash !== '') errs.push(invalid(child(at, 'url'), c.url, 'fragments are not permitted in the URL'))
      if (u.search !== '') errs.push(invalid(child(at, 'url'), c.url, 'query parameters are not permitted in the URL'))
    }
  } else {
    const s = c.service as Webhook
    const sat = child(at, 'service')
    if ((s.name ?? '') === '') errs.push(required(child(sat, 'name'), 'service name is required'))
    if ((s.namespace ?? '') === '') errs.push(required(child(sat, 'namespace'), 'service namespace is required'))
    if (s.port !== undefined && (s.port < 1 || s.port > 65535)) errs.push(invalid(child(sat, 'port'), s.port, 'port is not valid: must be between 1 and 65535, inclusive'))
    if (s.path !== undefined && !String(s.path).startsWith('/')) errs.push(invalid(child(sat, 'path'), s.path, "must start with a '/'"))
  }
  if (typeof c.caBundle === 'string' && c.caBundle !== '') {
    const pem = Buffer.from(c.caBundle, 'base64').toString('utf8')
    if (splitPemBundle(pem).length === 0) errs.push(invalid(child(at, 'caBundle'), '<bytes>', 'must be a PEM-encoded certificate bundle'))
  }
}

function validateWebhook (w: Webhook, at: string, mutating: boolean, errs: FieldError[]): void {
  if (typeof w.name !== 'string' || w.name === '') errs.push(required(child(at, 'name')))
  else {
    // IsFullyQualifiedName: a DNS subdomain of at least three segments.
    const bad = isDNS1123Subdomain(w.name)
    if (bad.length > 0) errs.push(invalid(child(at, 'name'), w.name, bad.join(',')))
    else if (w.name.split('.').length < 3) errs.push(invalid(child(at, 'name'), w.name, 'should be a domain with at least three segments separated by dots'))
  }
  for (const [i, r] of ((w.rules ?? []) as Webhook[]).entries()) validateRule(r, index(child(at, 'rules'), i), errs)
  if (w.failurePolicy !== undefined && !['Fail', 'Ignore'].includes(w.failurePolicy)) errs.push(notSupported(child(at, 'failurePolicy'), w.failurePolicy, ['Fail', 'Ignore']))
  if (w.matchPolicy !== undefined && !['Equivalent', 'Exact'].includes(w.matchPolicy)) errs.push(notSupported(child(at, 'matchPolicy'), w.matchPolicy, ['Equivalent', 'Exact']))
  if (w.sideEffects === undefined || w.sideEffects === '') errs.push(required(child(at, 'sideEffects'), 'must specify one of None, NoneOnDryRun'))
  else if (!['None', 'NoneOnDryRun'].includes(w.sideEffects)) errs.push(notSupported(child(at, 'sideEffects'), w.sideEffects, ['None', 'NoneOnDryRun']))
  const versions = (w.admissionReviewVersions ?? []) as string[]
  const vat = child(at, 'admissionReviewVersions')
  if (versions.length === 0) errs.push(required(vat, 'must specify one of v1, v1beta1'))
  else {
    const seen = new Set<string>()
    for (const [i, v] of versions.entries()) { if (seen.has(v)) errs.push(duplicate(index(vat, i), v)); seen.add(v) }
    if (!versions.includes('v1') && !versions.includes('v1beta1')) errs.push(invalid(vat, versions, 'must include at least one of v1, v1beta1'))
  }
  if (w.timeoutSeconds !== undefined && (w.timeoutSeconds < 1 || w.timeoutSeconds > 30)) errs.push(invalid(child(at, 'timeoutSeconds'), w.timeoutSeconds, 'the timeout value must be between 1 and 30 seconds'))
  if (mutating && w.reinvocationPolicy !== undefined && !['Never', 'IfNeeded'].includes(w.reinvocationPolicy)) errs.push(notSupported(child(at, 'reinvocationPolicy'), w.reinvocationPolicy, ['Never', 'IfNeeded']))
  validateClientConfig(w.clientConfig, child(at, 'clientConfig'), errs)
  const conds = (w.matchConditions ?? []) as Webhook[]
  const cat = child(at, 'matchConditions')
  if (conds.length > MAX_MATCH_CONDITIONS) errs.push(tooMany(cat, conds.length, MAX_MATCH_CONDITIONS))
  const names = new Set<string>()
  for (const [i, c] of conds.entries()) {
    const n = c?.name
    if (typeof n !== 'string' || n === '') errs.push(required(child(index(cat, i), 'name')))
    else if (isQualifiedName(n).length > 0) errs.push(invalid(child(index(cat, i), 'name'), n, isQualifiedName(n).join('; ')))
    else if (names.has(n)) errs.push(duplicate(child(index(cat, i), 'name'), n))
    names.add(n)
    if (typeof c?.expression !== 'string' || c.expression === '') errs.push(required(child(index(cat, i), 'expression')))
  }
}

/** Structure checks of every webhook of the configuration (names unique within it). */
export function validateWebhookConfiguration (obj: Obj, mutating: boolean): FieldError[] {
  const errs: FieldError[] = []
  const names = new Set<string>()
  for (const [i, w] of ((obj.webhooks ?? []) as Webhook[]).entries()) {
    const at = index('webhooks', i)
    if (typeof w?.name === 'string' && names.has(w.name)) errs.push(duplicate(child(at, 'name'), w.name))
    names.add(w?.name)
    validateWebhook(w, at, mutating, errs)
  }
  return errs
}

/** Compiles every match condition (field errors for those that do not), then frees the programs. */
export async function compileMatchConditions (evaluator: ExpressionEvaluator, obj: Obj): Promise<FieldError[]> {
  const errs: FieldError[] = []
  const all: PooledProgram[] = []
  try {
    for (const [i, w] of ((obj.webhooks ?? []) as Webhook[]).entries()) {
      for (const [j, c] of ((w?.matchConditions ?? []) as Webhook[]).entries()) {
        if (typeof c?.expression !== 'string' || c.expression === '') continue
        await compileExpression(evaluator, child(index(child(index('webhooks', i), 'matchConditions'), j), 'expression'), c.expression, matchConditionEnvironment(c.expression), true, errs, all)
      }
    }
  } finally { for (const p of all) p.release() }
  return errs
}

export function createWebhookConfigurationStrategy (mutating: boolean, evaluator?: ExpressionEvaluator): Strategy {
  return {
    prepareForCreate (obj) { defaultWebhooks(obj, mutating) },
    prepareForUpdate (obj) { defaultWebhooks(obj, mutating) },
    async validate (obj) {
      const errs = validateWebhookConfiguration(obj, mutating)
      if (evaluator !== undefined && errs.length === 0) errs.push(...await compileMatchConditions(evaluator, obj))
      return errs
    }
  }
}
