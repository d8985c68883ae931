// AuthorizationConfiguration (document 2 §2.1): its types, strict decoding, and every rule checkable without CEL.

import { statSync } from 'node:fs'
import { isAbsolute } from 'node:path'
import type { FieldError } from '../../schema/types.js'
import { child, duplicate, index, invalid, notSupported, required, tooMany } from '../../schema/field-errors.js'
import { isDNS1123Label } from '../../schema/metadata.js'
import { decodeConfig, goDurationString, type Shape } from '../config/decode.js'

export interface WebhookConnectionInfo { type: string; kubeConfigFile?: string }
export interface WebhookMatchCondition { expression: string }

/** A webhook authorizer; durations are in milliseconds (decoded from Go duration strings), 0 when unset. */
export interface WebhookConfiguration {
  authorizedTTL: number
  unauthorizedTTL: number
  timeout: number
  subjectAccessReviewVersion: string
  matchConditionSubjectAccessReviewVersion: string
  failurePolicy: string
  connectionInfo: WebhookConnectionInfo
  matchConditions: WebhookMatchCondition[]
}
export interface AuthorizerConfiguration { type: string; name: string; webhook?: WebhookConfiguration }
export interface AuthorizationConfiguration { authorizers: AuthorizerConfiguration[] }

/** The authorizer types orch serves; only Webhook may appear more than once (as kube-apiserver). */
export const AUTHORIZER_TYPES = ['AlwaysAllow', 'AlwaysDeny', 'Node', 'RBAC', 'Webhook']
export const MAX_MATCH_CONDITIONS = 64
export const MAX_WEBHOOK_TIMEOUT_MS = 30_000

const AUTHORIZATION_SHAPE: Shape = {
  authorizers: [{
    type: 'string',
    name: 'string',
    webhook: {
      authorizedTTL: 'duration',
      unauthorizedTTL: 'duration',
      timeout: 'duration',
      subjectAccessReviewVersion: 'string',
      matchConditionSubjectAccessReviewVersion: 'string',
      failurePolicy: 'string',
      connectionInfo: { type: 'string', kubeConfigFile: 'string' },
      matchConditions: [{ expression: 'string' }]
    }
  }]
}

/** Decodes the file's text (throws ConfigDecodeError); the result still needs validation. */
export function decodeAuthorizationConfiguration (text: string): AuthorizationConfiguration {
  const raw = decodeConfig(text, 'AuthorizationConfiguration', AUTHORIZATION_SHAPE) as { authorizers?: Array<Partial<AuthorizerConfiguration> & { webhook?: Partial<WebhookConfiguration> }> }
  return { authorizers: (raw.authorizers ?? []).map(a => ({ type: a.type ?? '', name: a.name ?? '', ...(a.webhook === undefined ? {} : { webhook: webhookDefaults(a.webhook) }) })) }
}

function webhookDefaults (w: Partial<WebhookConfiguration>): WebhookConfiguration {
  return {
    authorizedTTL: w.authorizedTTL ?? 0,
    unauthorizedTTL: w.unauthorizedTTL ?? 0,
    timeout: w.timeout ?? 0,
    subjectAccessReviewVersion: w.subjectAccessReviewVersion ?? '',
    matchConditionSubjectAccessReviewVersion: w.matchConditionSubjectAccessReviewVersion ?? '',
    failurePolicy: w.failurePolicy ?? '',
    matchConditions: w.matchConditions ?? [],
    connectionInfo: { ...w.connectionInfo, type: w.connectionInfo?.type ?? '' }
  }
}

/** Every rule of §2.1 that does not need CEL (match conditions are compiled by the builder), as Kubernetes words them. */
export function validateAuthorizationConfiguration (c: AuthorizationConfiguration): FieldError[] {
  const errs: FieldError[] = []
  if (c.authorizers.length === 0) errs.push(required('authorizers', 'at least one authorization mode must be defined'))
  const types = new Set<string>()
  const names = new Set<string>()
  c.authorizers.forEach((a, i) => {
    const at = index('authorizers', i)
    if (a.type === '') { errs.push(required(child(at, 'type'))); return }
    if (!AUTHORIZER_TYPES.includes(a.type)) { errs.push(notSupported(child(at, 'type'), a.type, AUTHORIZER_TYPES)); return }
    if (types.has(a.type) && a.type !== 'Webhook') { errs.push(duplicate(child(at, 'type'), a.type)); return }
    types.add(a.type)
    const namePath = child(at, 'name')
    const nameErrs = isDNS1123Label(a.name)
    if (a.name === '') errs.push(required(namePath))
    else if (names.has(a.name)) errs.push(duplicate(namePath, a.name))
    else if (nameErrs.length > 0) errs.push(invalid(namePath, a.name, `authorizer name is invalid: ${nameErrs.join(', ')}`))
    names.add(a.name)
    if (a.type === 'Webhook') {
      if (a.webhook === undefined) errs.push(required(child(at, 'webhook'), 'required when type=Webhook'))
      else errs.push(...validateWebhook(a.webhook, child(at, 'webhook')))
    } else if (a.webhook !== undefined) {
      errs.push(invalid(child(at, 'webhook'), 'non-null', 'may only be specified when type=Webhook'))
    }
  })
  return errs
}

function validatePositive (ms: number, at: string, max?: number): FieldError[] {
  if (ms === 0) return [required(at)]
  if (max !== undefined && (ms > max || ms < 0)) return [invalid(at, goDurationString(ms), `must be > 0s and <= ${goDurationString(max)}`)]
  if (ms < 0) return [invalid(at, goDurationString(ms), 'must be > 0s')]
  return []
}

function validateWebhook (w: WebhookConfiguration, at: string): FieldError[] {
  const errs: FieldError[] = [
    ...validatePositive(w.timeout, child(at, 'timeout'), MAX_WEBHOOK_TIMEOUT_MS),
    ...validatePositive(w.authorizedTTL, child(at, 'authorizedTTL')),
    ...validatePositive(w.unauthorizedTTL, child(at, 'unauthorizedTTL'))
  ]
  const sarPath = child(at, 'subjectAccessReviewVersion')
  if (w.subjectAccessReviewVersion === '') errs.push(required(sarPath))
  else if (!['v1', 'v1beta1'].includes(w.subjectAccessReviewVersion)) errs.push(notSupported(sarPath, w.subjectAccessReviewVersion, ['v1', 'v1beta1']))
  const mcPath = child(at, 'matchConditionSubjectAccessReviewVersion')
  if (w.matchConditionSubjectAccessReviewVersion === '') {
    if (w.matchConditions.length > 0) errs.push(required(mcPath, 'required if match conditions are specified'))
  } else if (w.matchConditionSubjectAccessReviewVersion !== 'v1') errs.push(notSupported(mcPath, w.matchConditionSubjectAccessReviewVersion, ['v1']))
  const fpPath = child(at, 'failurePolicy')
  if (w.failurePolicy === '') errs.push(required(fpPath))
  else if (!['NoOpinion', 'Deny'].includes(w.failurePolicy)) errs.push(notSupported(fpPath, w.failurePolicy, ['NoOpinion', 'Deny']))
  errs.push(...validateConnectionInfo(w.connectionInfo, child(at, 'connectionInfo')))
  errs.push(...validateMatchConditionShapes(w.matchConditions, child(at, 'matchConditions')))
  return errs
}

function validateConnectionInfo (c: WebhookConnectionInfo, at: string): FieldError[] {
  const filePath = child(at, 'kubeConfigFile')
  const file = c.kubeConfigFile
  if (c.type === '') return [required(child(at, 'type'))]
  if (c.type === 'InClusterConfig') return file !== undefined ? [invalid(filePath, file, 'can only be set when type=KubeConfigFile')] : []
  if (c.type !== 'KubeConfigFile') return [notSupported(child(at, 'type'), c.type, ['InClusterConfig', 'KubeConfigFile'])]
  if (file === undefined || file === '') return [required(filePath)]
  if (!isAbsolute(file)) return [invalid(filePath, file, 'must be an absolute path')]
  try {
    if (!statSync(file).isFile()) return [invalid(filePath, file, 'must be a regular file')]
  } catch (err) {
    return [invalid(filePath, file, `error loading file: stat ${file}: ${(err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file or directory' : (err as Error).message}`)]
  }
  return []
}

function validateMatchConditionShapes (conditions: WebhookMatchCondition[], at: string): FieldError[] {
  if (conditions.length > MAX_MATCH_CONDITIONS) return [tooMany(at, conditions.length, MAX_MATCH_CONDITIONS)]
  const errs: FieldError[] = []
  const seen = new Set<string>()
  conditions.forEach((c, i) => {
    const p = child(index(at, i), 'expression')
    const e = c.expression ?? ''
    if (e.trim() === '') { errs.push(required(p)); return }
    if (seen.has(e)) { errs.push(duplicate(p, e)); return }
    seen.add(e)
  })
  return errs
}
