// Picks the strategy of a built-in kind by the definition's strategy name (or kind).

import type { Store } from '../../storage/store.js'
import type { ResourceDefinition } from '../../schema/types.js'
import type { Strategy } from '../strategy.js'
import { eventsV1Strategy } from './events-v1.js'
import { createPodStrategy, type PriorityClassLookup } from './pod.js'
import type { ServiceAccountLookup } from './service-account-admission.js'
import { createServiceStrategy } from './service.js'
import { eventStrategy, jobStrategy, nodeStrategy, replicaSetStrategy, secretStrategy, volumePhaseStrategy, workloadStrategy } from './simple.js'
import { clusterRoleBindingStrategy, clusterRoleStrategy, roleBindingStrategy, roleStrategy } from './rbac.js'
import { namespaceStrategy } from '../namespaces.js'
import { createCrdStrategy } from '../crds.js'
import { noCelRules, type CelRules } from '../cel-rules.js'
import { resourcePrefix } from '../keys.js'
import { createCsrStrategy, type SignerPermission } from './csr.js'
import { createWebhookConfigurationStrategy } from './webhook-configuration.js'
import { createValidatingAdmissionPolicyStrategy, validatingAdmissionPolicyBindingStrategy } from './validating-admission-policy.js'
import type { ExpressionEvaluator } from '../../../sandbox/expression-evaluator.js'

export interface StrategyOptions {
  store: Store
  serviceCIDR?: string
  nodePortRange?: [number, number]
  /** CRD validation rules; without it, CRDs carrying rules are refused. */
  celRules?: CelRules
  /** PriorityClasses for the Priority admission step of pod creation. */
  priorityClasses?: PriorityClassLookup
  /** ServiceAccounts for the ServiceAccount admission step of pod creation (absent: the step is off). */
  serviceAccounts?: ServiceAccountLookup
  /** CSR approval and signing checks (CertificateApproval, CertificateSigning admission); without it, not checked. */
  signerPermission?: SignerPermission
  /** Built-in admission steps turned off by their plugin names (--disable-admission-plugins). */
  disabledAdmission?: readonly string[]
  /** Compiles webhook configurations' match conditions on write; without it they are checked only when called. */
  webhookExpressions?: ExpressionEvaluator
  /** Compiles ValidatingAdmissionPolicy expressions at write time; without it they are not checked when written. */
  policyExpressions?: ExpressionEvaluator
}

export function builtinStrategy (def: ResourceDefinition, o: StrategyOptions): Strategy | undefined {
  switch (def.strategy ?? (def.group === '' ? def.kind.toLowerCase() : '')) {
    case 'pod': return createPodStrategy(o.priorityClasses, o.serviceAccounts, new Set(o.disabledAdmission))
    case 'service': return createServiceStrategy({ store: o.store, prefix: resourcePrefix(def), serviceCIDR: o.serviceCIDR, nodePortRange: o.nodePortRange })
    case 'node': return nodeStrategy
    case 'event': return eventStrategy
    case 'events-v1': return eventsV1Strategy
    case 'secret': return secretStrategy
    case 'namespace': return namespaceStrategy
    case 'crd': return createCrdStrategy(o.celRules ?? noCelRules)
    case 'replicaset': return replicaSetStrategy
    case 'deployment': case 'statefulset': case 'daemonset': return workloadStrategy
    case 'job': return jobStrategy
    case 'csr': return createCsrStrategy(def.group, o.signerPermission, new Set(o.disabledAdmission))
    case 'persistentvolume': case 'persistentvolumeclaim': return volumePhaseStrategy
    case 'mutatingwebhookconfiguration': return createWebhookConfigurationStrategy(true, o.webhookExpressions)
    case 'validatingwebhookconfiguration': return createWebhookConfigurationStrategy(false, o.webhookExpressions)
    case 'validatingadmissionpolicy': return createValidatingAdmissionPolicyStrategy(o.policyExpressions)
    case 'validatingadmissionpolicybinding': return validatingAdmissionPolicyBindingStrategy
    case 'role': return roleStrategy
    case 'clusterrole': return clusterRoleStrategy
    case 'rolebinding': return roleBindingStrategy
    case 'clusterrolebinding': return clusterRoleBindingStrategy
    default: return undefined
  }
}
