// The webhooks of one kind of configuration (mutating or validating), kept from a registry watch, and deciding per write whom to call.

import { randomUUID } from 'node:crypto'
import { badRequest, internalError } from '../../errors/status-error.js'
import type { WriteAttributes } from '../../registry/admission.js'
import type { Registry } from '../../registry/types.js'
import type { Logger } from '../../registry/core.js'
import { inProcessClient } from '../../controllers/client/in-process.js'
import type { ApiClient, Obj } from '../../controllers/client/types.js'
import { SharedInformer } from '../../controllers/informer.js'
import { systemControllerClock, type ControllerClock } from '../../controllers/clock.js'
import { labelSelectorMatches } from '../../registry/label-selector.js'
import type { ExpressionEvaluator, PooledProgram } from '../../../sandbox/expression-evaluator.js'
import { AgentCache, postReview, resolveEndpoint, type ClientConfig, type DispatcherFactory } from './client.js'
import { isEmpty, matchedTarget, objectSelectorMatches, type MatchInput, type RequestTarget, type Rule } from './matching.js'
import { MATCH_CONDITION_ENVIRONMENT, matchConditionEnvironment, usesAuthorizer } from './match-environment.js'
import { createAuthorizerEvaluator } from '../vap/authorizer.js'
import type { Authorizer } from '../../auth/types.js'
import { alwaysDeny } from '../../auth/authorizer.js'
import { admissionRequest, admissionResponse, admissionReview, type AdmissionResponse } from './review.js'

export interface WebhookDeps {
  /** The CEL sandbox pool (match conditions). */
  evaluator: ExpressionEvaluator
  logger: Logger
  clock?: ControllerClock
  /** Answers the `authorizer` variable of match conditions (without it every check is denied). */
  authorizer?: Authorizer
  /** Headers for each call from the current request's context (W3C `traceparent` when tracing); none by default. */
  outboundHeaders?: () => Record<string, string>
  /** Dispatchers for the calls (the `cluster` egress selection); direct by default. */
  dispatcher?: DispatcherFactory
}

/** One webhook of a configuration, as stored (defaults applied). */
export interface Webhook {
  name: string
  clientConfig: ClientConfig
  rules?: Rule[]
  failurePolicy?: string
  matchPolicy?: string
  namespaceSelector?: Obj
  objectSelector?: Obj
  sideEffects?: string
  timeoutSeconds?: number
  admissionReviewVersions: string[]
  reinvocationPolicy?: string
  matchConditions?: Array<{ name: string; expression: string }>
}

/** A webhook that is to be called for a write, with the target its rules matched. */
export interface Invocation { hook: Webhook; target: RequestTarget }

/** Webhooks are not called for webhook configurations themselves (a broken webhook could otherwise never be removed). */
const exemptGroups = new Set(['admissionregistration.orch.io', 'admissionregistration.k8s.io'])

export class WebhookDispatcher {
  private registry?: Registry
  private client?: ApiClient
  private informer?: SharedInformer
  private readonly agents: AgentCache
  private readonly programs = new Map<string, Promise<PooledProgram>>()
  /** Conditions using `authorizer` run on a replaying evaluator of their own (vap/authorizer.ts), made on first need. */
  private authz?: Promise<ExpressionEvaluator>
  private readonly uids = new WeakMap<object, string>()

  constructor (private readonly plural: 'mutatingwebhookconfigurations' | 'validatingwebhookconfigurations', private readonly deps: WebhookDeps) {
    this.agents = new AgentCache(deps.dispatcher)
  }

  /** Starts watching the configurations of `registry`; resolves once they are listed. */
  async start (registry: Registry): Promise<void> {
    this.registry = registry
    this.client = inProcessClient(registry, 'admission-webhooks', 'system:apiserver')
    this.informer = new SharedInformer({ group: 'admissionregistration.orch.io', version: 'v1', resource: this.plural, namespaced: false },
      this.client, this.deps.clock ?? systemControllerClock, this.deps.logger)
    this.informer.start()
    await this.informer.waitForSync()
  }

  async stop (): Promise<void> {
    this.informer?.stop()
    for (const p of this.programs.values()) p.then(x => x.release(), () => {})
    this.programs.clear()
    await this.agents.close()
  }

  /** Every webhook, configurations in name order, webhooks in their order (as kube-apiserver sorts them). */
  webhooks (): Webhook[] {
    const configs = (this.informer?.list() ?? []).slice().sort((a, b) => String(a.metadata?.name).localeCompare(String(b.metadata?.name)))
    return configs.flatMap(c => (c.webhooks ?? []) as Webhook[])
  }

  /** The webhooks to call for `a`, in order. Throws (per failurePolicy) when a match condition fails to evaluate. */
  async invocations (a: WriteAttributes): Promise<Invocation[]> {
    const d = a.definition
    if (this.informer === undefined || exemptGroups.has(d.group)) return []
    const m: MatchInput = { group: d.group, version: d.version, resource: d.plural, subresource: a.subresource, kind: d.kind, operation: a.operation, namespace: a.namespace }
    const out: Invocation[] = []
    for (const hook of this.webhooks()) {
      const target = matchedTarget(hook.rules ?? [], hook.matchPolicy, m, () => this.registry?.definitions() ?? [])
      if (target === undefined) continue
      if (!await this.namespaceMatches(hook, a)) continue
      const object = a.operation === 'DELETE' ? undefined : a.object
      const oldObject = a.operation === 'DELETE' ? a.object : a.oldObject
      if (!objectSelectorMatches(hook.objectSelector, object, oldObject)) continue
      if (!await this.conditionsMatch(hook, a, target)) continue
      if (a.ctx.dryRun && hook.sideEffects !== 'None' && hook.sideEffects !== 'NoneOnDryRun') throw badRequest(`admission webhook "${hook.name}" does not support dry run`)
      out.push({ hook, target })
    }
    return out
  }

  private async namespaceMatches (hook: Webhook, a: WriteAttributes): Promise<boolean> {
    const sel = hook.namespaceSelector
    if (sel === undefined || isEmpty(sel)) return true
    if (a.definition.group === '' && a.definition.plural === 'namespaces') {
      return labelSelectorMatches(sel, (a.object.metadata as Obj | undefined)?.labels ?? {})
    }
    if (a.namespace === '') return true
    const ns = await this.client!.resource({ group: '', version: 'v1', resource: 'namespaces', namespaced: false }).get('', a.namespace)
    return labelSelectorMatches(sel, ns?.metadata?.labels ?? {})
  }

  /** All conditions true: call. Any false: skip. An error: per failurePolicy (Fail refuses the write, Ignore skips). */
  private async conditionsMatch (hook: Webhook, a: WriteAttributes, t: RequestTarget): Promise<boolean> {
    const conds = hook.matchConditions ?? []
    if (conds.length === 0) return true
    const request = admissionRequest(this.uid(a), a, t)
    const variables = { object: request.object, oldObject: request.oldObject, request }
    try {
      for (const c of conds) {
        const { value } = await (await this.program(c.expression)).evaluate(variables)
        if (value !== true && value !== false) throw new Error(`matchCondition '${c.name}' must evaluate to bool`)
        if (!value) return false
      }
      return true
    } catch (err) {
      if (hook.failurePolicy === 'Ignore') return false
      throw internalError(new Error(`failed calling webhook "${hook.name}": failed to evaluate match conditions: ${(err as Error).message}`))
    }
  }

  private async authorizerEvaluator (): Promise<ExpressionEvaluator> {
    this.authz ??= createAuthorizerEvaluator(this.deps.authorizer ?? alwaysDeny)
    return await this.authz
  }

  private async program (expression: string): Promise<PooledProgram> {
    let p = this.programs.get(expression)
    if (p === undefined) {
      p = usesAuthorizer(expression)
        ? this.authorizerEvaluator().then(async e => await e.compileExpression(expression, matchConditionEnvironment(expression)))
        : this.deps.evaluator.compileExpression(expression, MATCH_CONDITION_ENVIRONMENT)
      p.catch(() => this.programs.delete(expression))
      this.programs.set(expression, p)
    }
    return await p
  }

  /** One uid per write, shared by every webhook it is sent to. */
  uid (a: WriteAttributes): string {
    let u = this.uids.get(a)
    if (u === undefined) { u = randomUUID(); this.uids.set(a, u) }
    return u
  }

  /** Calls the webhook; resolves with its response, or undefined when it failed and its failurePolicy is Ignore. */
  async call (inv: Invocation, a: WriteAttributes): Promise<AdmissionResponse | undefined> {
    const { hook } = inv
    const uid = this.uid(a)
    try {
      const ep = await resolveEndpoint(hook.clientConfig, this.client)
      const review = admissionReview(hook.admissionReviewVersions ?? ['v1'], admissionRequest(uid, a, inv.target))
      const answer = await postReview(ep, this.agents.get(hook.clientConfig.caBundle, ep.serverName), review, (hook.timeoutSeconds ?? 10) * 1000, this.deps.outboundHeaders?.())
      return admissionResponse(answer, uid)
    } catch (err) {
      return this.failed(hook, err)
    }
  }

  /** A call that failed: Ignore lets the write through (logged), Fail refuses it with Kubernetes' wording. */
  failed (hook: Webhook, err: unknown): undefined {
    if (hook.failurePolicy === 'Ignore') {
      this.deps.logger.warn({ webhook: hook.name, err: (err as Error).message }, 'failed calling webhook, failing open')
      return undefined
    }
    throw internalError(new Error(`failed calling webhook "${hook.name}": ${(err as Error).message}`))
  }
}
