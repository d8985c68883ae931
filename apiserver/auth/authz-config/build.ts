// The Authorizer of an AuthorizationConfiguration: validated, match conditions compiled, webhooks connected, chained in order.

import { readFile } from 'node:fs/promises'
import type { CelEnvironment } from '../../../sandbox/sandbox.js'
import type { ExpressionEvaluator, PooledProgram } from '../../../sandbox/expression-evaluator.js'
import type { FieldError } from '../../schema/types.js'
import { child, index, invalid } from '../../schema/field-errors.js'
import { alwaysAllow, alwaysDeny, privilegedGroup, unionAuthorizer } from '../authorizer.js'
import type { Authorizer } from '../types.js'
import { ConfigDecodeError } from '../config/decode.js'
import { aggregate, InvalidConfigurationError } from '../config/errors.js'
import { compileExpression } from '../config/cel-compile.js'
import { decodeAuthorizationConfiguration, validateAuthorizationConfiguration, type AuthorizationConfiguration } from './config.js'
import { createWebhookAuthorizer, type RetryBackoff, type WebhookAuthorizer } from './webhook-authorizer.js'
import { createWebhookClient, loadWebhookTarget } from './webhook-client.js'
import type { Dispatcher } from 'undici'
import type { TargetTls } from '../../egress/egress.js'
import type { AuthorizerFactories as ModeFactories } from '../authorizer.js'

const REQUEST_FIELDS: Record<string, string[]> = {
  request: ['resourceAttributes', 'nonResourceAttributes', 'user', 'groups', 'extra', 'uid'],
  resourceAttributes: ['namespace', 'verb', 'group', 'version', 'resource', 'subresource', 'name'],
  nonResourceAttributes: ['path', 'verb']
}
/**
 * Match conditions see `request`: the v1 SubjectAccessReview spec, absent fields absent (test them with has()).
 * It is declared as a map so that `request.resourceAttributes.namespace` reads as in Kubernetes (a typed object
 * would need the reserved word escaped); undefinedRequestField() gives back the compile-time check of field names.
 */
export const MATCH_CONDITION_ENVIRONMENT: CelEnvironment = { variables: { request: { type: 'map<string, dyn>' } } }

/** The first selection of a field the SubjectAccessReview spec does not have, worded as cel-go's checker. */
export function undefinedRequestField (expression: string): string | undefined {
  const code = expression.replace(/("""[\s\S]*?"""|'''[\s\S]*?'''|"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')/g, m => ' '.repeat(m.length))
  const re = /\b(request|resourceAttributes|nonResourceAttributes)\s*\.\s*([A-Za-z_][A-Za-z0-9_]*)/g
  for (let m = re.exec(code); m !== null; m = re.exec(code)) {
    re.lastIndex = m.index + m[0].length - m[2].length
    if (m[1] !== 'request' && !/\brequest\s*\.\s*$/.test(code.slice(0, m.index))) continue
    if (!REQUEST_FIELDS[m[1]].includes(m[2])) {
      const at = m.index + m[0].length - m[2].length
      const col = at + 1
      return `ERROR: <input>:1:${col}: undefined field '${m[2]}'\n | ${expression}\n | ${'.'.repeat(at)}^`
    }
  }
  return undefined
}

/** Reads and decodes --authorization-config; errors name the file. */
export async function loadAuthorizationConfigFile (path: string): Promise<AuthorizationConfiguration> {
  try {
    return decodeAuthorizationConfiguration(await readFile(path, 'utf8'))
  } catch (err) {
    const why = err instanceof ConfigDecodeError ? err.message : (err as NodeJS.ErrnoException).code === 'ENOENT' ? `open ${path}: no such file or directory` : (err as Error).message
    throw new InvalidConfigurationError(`failed to load authorization configuration from file ${JSON.stringify(path)}: ${why}`)
  }
}

/** The Node and RBAC authorizers the server supplies (made when the configuration names their type; either may be absent). */
export type AuthorizerFactories = Partial<ModeFactories>

export interface ConfiguredAuthorizerOptions {
  /** Compiles and runs match conditions (the sandbox pool). */
  evaluator: ExpressionEvaluator
  factories: AuthorizerFactories
  /** Told every webhook failure (the decision follows its failure policy; clients see no reason), for the log. */
  onWebhookError?: (authorizer: string, message: string) => void
  /** Retries of webhook requests (default Kubernetes' backoff). */
  webhookRetryBackoff?: RetryBackoff
  now?: () => number
  /** Connection pools of the webhooks (the `controlplane` egress selection); direct by default. */
  dispatcher?: (tls: TargetTls) => Dispatcher
}

export interface ConfiguredAuthorizer {
  /** system:masters first, then the configured authorizers in order; the first allow or deny wins. */
  authorizer: Authorizer
  /** The webhook authorizers by name (observability, tests). */
  webhooks: Map<string, WebhookAuthorizer>
  close(): Promise<void>
}

/** Throws InvalidConfigurationError (`invalid authorization configuration: ...`) naming every bad field. */
export async function buildConfiguredAuthorizer (config: AuthorizationConfiguration, o: ConfiguredAuthorizerOptions): Promise<ConfiguredAuthorizer> {
  const errors = validateAuthorizationConfiguration(config)
  const compiled: PooledProgram[][] = []
  const all: PooledProgram[] = []
  for (const [i, a] of config.authorizers.entries()) {
    const programs: PooledProgram[] = []
    compiled.push(programs)
    if (a.type !== 'Webhook' || a.webhook === undefined) continue
    if (a.webhook.connectionInfo.type === 'InClusterConfig') {
      errors.push(invalid(child(index('authorizers', i), 'webhook.connectionInfo.type'), 'InClusterConfig', 'orch has no in-cluster service account for the API server: use KubeConfigFile'))
    }
    const seen = new Set<string>()
    for (const [j, c] of a.webhook.matchConditions.slice(0, 64).entries()) {
      if (c.expression.trim() === '' || seen.has(c.expression)) continue
      seen.add(c.expression)
      const at = child(index(child(index('authorizers', i), 'webhook.matchConditions'), j), 'expression')
      const undefinedField = undefinedRequestField(c.expression)
      if (undefinedField !== undefined) { errors.push(invalid(at, c.expression, `compilation failed: ${undefinedField}`)); continue }
      const p = await compileExpression(o.evaluator, at, c.expression, MATCH_CONDITION_ENVIRONMENT, true, errors, all)
      if (p !== undefined) programs.push(p)
    }
  }
  errors.push(...missingFactories(config, o.factories))
  if (errors.length > 0) {
    for (const p of all) p.release()
    throw new InvalidConfigurationError(`invalid authorization configuration: ${aggregate(errors)}`)
  }
  const webhooks = new Map<string, WebhookAuthorizer>()
  const chain: Authorizer[] = [privilegedGroup]
  try {
    for (const [i, a] of config.authorizers.entries()) {
      if (a.type === 'AlwaysAllow') chain.push(alwaysAllow)
      else if (a.type === 'AlwaysDeny') chain.push(alwaysDeny)
      else if (a.type === 'Node') chain.push(o.factories.node!())
      else if (a.type === 'RBAC') chain.push(o.factories.rbac!())
      else {
        const target = await loadWebhookTarget(a.webhook!.connectionInfo.kubeConfigFile!).catch((err: Error) => {
          throw new InvalidConfigurationError(`invalid authorization configuration: authorizers[${i}].webhook.connectionInfo.kubeConfigFile: ${err.message}`)
        })
        const w = createWebhookAuthorizer({ name: a.name, config: a.webhook!, client: createWebhookClient(target, o.dispatcher), matchConditions: compiled[i], onError: o.onWebhookError, retryBackoff: o.webhookRetryBackoff, now: o.now })
        webhooks.set(a.name, w)
        chain.push(w)
      }
    }
  } catch (err) {
    for (const p of all) p.release()
    await Promise.all([...webhooks.values()].map(async w => await w.close()))
    throw err
  }
  return {
    authorizer: unionAuthorizer(chain),
    webhooks,
    async close () { await Promise.all([...webhooks.values()].map(async w => await w.close())) }
  }
}

function missingFactories (config: AuthorizationConfiguration, f: AuthorizerFactories): FieldError[] {
  const errs: FieldError[] = []
  config.authorizers.forEach((a, i) => {
    if ((a.type === 'Node' && f.node === undefined) || (a.type === 'RBAC' && f.rbac === undefined)) {
      errs.push(invalid(child(index('authorizers', i), 'type'), a.type, 'this server was started without that authorizer'))
    }
  })
  return errs
}
