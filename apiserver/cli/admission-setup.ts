// `orch up` / `orch apiserver`'s admission: the enabled plugins built in kube-apiserver's order, webhooks with their lifecycle.

import type { Logger } from 'pino'
import { createSandboxPool } from '../../sandbox/pool.js'
import { buildAdmission, type AdmissionOptions, type BuiltAdmission } from '../admission/build.js'
import { DEFAULT_ON_PLUGINS } from '../admission/plugins.js'
import { createMutatingWebhookPlugin, createValidatingWebhookPlugin, lazyExpressionEvaluator } from '../admission/webhooks/index.js'
import type { Authorizer } from '../auth/types.js'
import type { MutatingAdmission, WriteAdmission } from '../registry/admission.js'
import type { ExpressionEvaluator } from '../../sandbox/expression-evaluator.js'
import type { Registry } from '../registry/types.js'
import type { FeatureGates } from '../featuregate/featuregate.js'
import { createValidatingAdmissionPolicyPlugin, FEATURE_GATE, type ValidatingAdmissionPolicyPlugin } from '../admission/vap/plugin.js'
import { createPolicyTypeChecker } from '../admission/vap/type-check.js'
import { startControllerManager } from '../controllers/manager.js'
import { inProcessClient } from '../controllers/client/in-process.js'
import type { DispatcherFactory } from '../admission/webhooks/client.js'

export interface AdmissionSetup {
  /** For createRegistry: the built-in steps on or off, the plugins in order, the webhooks' expression compiler. */
  registryOptions: BuiltAdmission['registryOptions'] & { mutatingAdmission: MutatingAdmission[], webhookExpressions: ExpressionEvaluator, policyExpressions: ExpressionEvaluator }
  validating: WriteAdmission[]
  /** Whether NodeRestriction runs (createAuthorizationStack's option). */
  nodeRestriction: boolean
  /** Once the registry runs: the webhooks watch their configurations. */
  start(registry: Registry): Promise<void>
  stop(): Promise<void>
}

export interface AdmissionSetupInput {
  options: AdmissionOptions
  registry: () => Registry
  /** Asked lazily: the authorizers watch the registry, made after this. */
  authorizer: Authorizer
  logger: Logger
  celWorkers?: number
  /** Headers the webhooks send from the request's context (the tracing's `traceparent`). */
  outboundHeaders?: () => Record<string, string>
  /** Dispatchers of webhook calls (the `cluster` egress selection); direct by default. */
  dispatcher?: DispatcherFactory
  /** --feature-gates (ValidatingAdmissionPolicy, off by default as in v1.29). */
  featureGates?: FeatureGates
}

export function setUpAdmission (i: AdmissionSetupInput): AdmissionSetup {
  // Webhook match conditions get sandbox threads of their own, made when a configuration first has conditions.
  const cel = lazyExpressionEvaluator(() => createSandboxPool({ size: i.celWorkers, limits: { deadlineMs: 250 } }))
  const log = i.logger.child({ component: 'admission' })
  const webhookDeps = { evaluator: cel, logger: log, outboundHeaders: i.outboundHeaders, dispatcher: i.dispatcher, authorizer: i.authorizer }
  const mutatingWebhooks = createMutatingWebhookPlugin(webhookDeps)
  const validatingWebhooks = createValidatingWebhookPlugin(webhookDeps)
  // ValidatingAdmissionPolicy reads the registry it guards: made at start, reached through this step meanwhile.
  let policies: ValidatingAdmissionPolicyPlugin | undefined
  let policyStatus: { stop(): void } | undefined
  const policyStep: WriteAdmission = { admit: async a => { await policies?.validating.admit(a) } }
  const adm = buildAdmission({
    registry: i.registry,
    authorizer: i.authorizer,
    options: i.options,
    pluginFactories: {
      MutatingAdmissionWebhook: () => ({ mutating: mutatingWebhooks }),
      ValidatingAdmissionWebhook: () => ({ validating: validatingWebhooks }),
      ValidatingAdmissionPolicy: () => ({ validating: policyStep })
    }
  })
  // Default-on plugins for kinds orch does not serve (StorageClass, IngressClass, ...) are not worth a warning at every start.
  const asked = adm.unimplemented.filter(p => !DEFAULT_ON_PLUGINS.includes(p))
  if (asked.length > 0) log.warn({ plugins: asked }, 'admission plugins enabled that orch does not implement')
  const webhooksOn = adm.active.includes('MutatingAdmissionWebhook')
  return {
    // A webhook asking to be called again when later plugins changed the object is, last of all.
    registryOptions: { ...adm.registryOptions, mutatingAdmission: webhooksOn ? [...adm.mutating, mutatingWebhooks.reinvocation] : adm.mutating, webhookExpressions: cel, policyExpressions: cel },
    validating: adm.validating,
    nodeRestriction: adm.nodeRestriction,
    async start (registry) {
      await mutatingWebhooks.start(registry)
      await validatingWebhooks.start(registry)
      if (adm.active.includes('ValidatingAdmissionPolicy')) {
        policies = createValidatingAdmissionPolicyPlugin({ registry, evaluator: cel, authorizer: i.authorizer, featureGates: i.featureGates })
        await policies.start()
        // Type-checking warnings on the policies' status (kube-apiserver runs this controller itself), with the gate.
        if (i.featureGates?.enabled(FEATURE_GATE) === true) {
          policyStatus = startControllerManager({
            client: inProcessClient(registry, 'orch-apiserver'),
            logger: log,
            controllers: ['validatingadmissionpolicy-status-controller'],
            settings: { policyTypeChecker: createPolicyTypeChecker(registry, cel) }
          })
        }
      }
    },
    async stop () {
      policyStatus?.stop()
      policies?.stop()
      await mutatingWebhooks.stop()
      await validatingWebhooks.stop()
      await cel.dispose()
    }
  }
}
