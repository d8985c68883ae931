// The PodSecurity admission plugin: enforces, audits and warns the Pod Security Standards per namespace labels.

import { forbidden, invalid } from '../../errors/status-error.js'
import type { WriteAdmission, WriteAttributes } from '../../registry/admission.js'
import { parsePodSecurityConfig, type PodSecurityConfig } from './config.js'
import { evaluatePod, violatesMessage, wouldViolateMessage } from './evaluate.js'
import { levelVersionString, policyFromLabels, sameLevelVersion, type LevelVersion, type Policy } from './levels.js'
import { obj, str, type Obj, type PodView } from './pod-view.js'
import { isPodController, isSignificantUpdate, podTemplateOf, podViewOf } from './workloads.js'
import { exemptNamespaceWarning, existingPodWarnings } from './namespace-warnings.js'

export interface PodSecurityDeps {
  /** The namespace object (its labels carry the policy), or undefined when there is none. */
  namespaceLookup: (name: string) => Promise<Obj | undefined>
  /** The pods of a namespace, to warn on an enforce label change; without it that evaluation is skipped. */
  podsInNamespace?: (namespace: string) => Promise<Obj[]>
}

/** Audit annotation keys, as Kubernetes writes them. */
export const AUDIT_ENFORCE_POLICY = 'pod-security.kubernetes.io/enforce-policy'
export const AUDIT_VIOLATIONS = 'pod-security.kubernetes.io/audit-violations'
export const AUDIT_EXEMPT = 'pod-security.kubernetes.io/exempt'

function annotate (a: WriteAttributes, key: string, value: string): void {
  a.ctx.auditAnnotations ??= {}
  a.ctx.auditAnnotations[key] = value
}

function labelsOf (o: Obj | undefined): Record<string, string> {
  const out: Record<string, string> = {}
  for (const [k, v] of Object.entries(obj(obj(o?.metadata).labels))) if (typeof v === 'string') out[k] = v
  return out
}

export function createPodSecurityPlugin (deps: PodSecurityDeps, config?: unknown): { validating: WriteAdmission } {
  const cfg: PodSecurityConfig = parsePodSecurityConfig(config)

  const namespacePolicy = async (namespace: string): Promise<Policy> => {
    const ns = await deps.namespaceLookup(namespace)
    return policyFromLabels(labelsOf(ns), cfg.defaults).policy
  }

  /** Which exemption applies (namespace, user, runtimeClass), if any. */
  const exemption = (a: WriteAttributes, pod: PodView): string | undefined => {
    if (cfg.exemptions.namespaces.has(a.namespace)) return 'namespace'
    if (cfg.exemptions.usernames.has(a.ctx.user.username)) return 'user'
    const rc = str(pod.spec.runtimeClassName)
    if (rc !== undefined && cfg.exemptions.runtimeClasses.has(rc)) return 'runtimeClass'
    return undefined
  }

  const auditAndWarn = (a: WriteAttributes, policy: Policy, pod: PodView, skipWarn: (lv: LevelVersion) => boolean): void => {
    if (policy.audit.level !== 'privileged') {
      const vs = evaluatePod(policy.audit, pod)
      if (vs.length > 0) annotate(a, AUDIT_VIOLATIONS, wouldViolateMessage(policy.audit, vs))
    }
    if (policy.warn.level !== 'privileged' && !skipWarn(policy.warn)) {
      const vs = evaluatePod(policy.warn, pod)
      if (vs.length > 0) a.ctx.warnings.push(wouldViolateMessage(policy.warn, vs))
    }
  }

  const admitPod = async (a: WriteAttributes): Promise<void> => {
    if (a.subresource !== '' && a.subresource !== 'ephemeralcontainers') return
    const pod = podViewOf(a.object)
    if (a.operation === 'UPDATE' && !isSignificantUpdate(pod, a.oldObject === undefined ? undefined : podViewOf(a.oldObject))) return
    const policy = await namespacePolicy(a.namespace)
    annotate(a, AUDIT_ENFORCE_POLICY, levelVersionString(policy.enforce))
    const exempt = exemption(a, pod)
    if (exempt !== undefined) {
      annotate(a, AUDIT_EXEMPT, exempt)
      return
    }
    const refused = evaluatePod(policy.enforce, pod)
    // A warn policy equal to the enforce one would only repeat the refusal (or find nothing).
    auditAndWarn(a, policy, pod, lv => sameLevelVersion(lv, policy.enforce))
    if (refused.length > 0) throw forbidden({ group: '', resource: 'pods' }, a.name, violatesMessage(policy.enforce, refused))
  }

  /** Pod controllers: their template is audited and warned about, never enforced (the pods they make are). */
  const admitController = async (a: WriteAttributes): Promise<void> => {
    if (a.subresource !== '') return
    const { group, kind } = a.definition
    const template = podTemplateOf(group, kind, a.object)
    if (template === undefined) return
    if (a.operation === 'UPDATE' && !isSignificantUpdate(template, podTemplateOf(group, kind, a.oldObject))) return
    const policy = await namespacePolicy(a.namespace)
    const exempt = exemption(a, template)
    if (exempt !== undefined) {
      annotate(a, AUDIT_EXEMPT, exempt)
      return
    }
    auditAndWarn(a, policy, template, () => false)
  }

  const admitNamespace = async (a: WriteAttributes): Promise<void> => {
    if (a.subresource !== '') return
    const { policy, errors } = policyFromLabels(labelsOf(a.object), cfg.defaults)
    if (errors.length > 0) {
      throw invalid('', 'Namespace', a.name, errors.map(e => ({
        reason: 'FieldValueInvalid',
        field: `metadata.labels[${e.label}]`,
        message: `Invalid value: ${JSON.stringify(e.value)}: ${e.message}`
      })))
    }
    if (cfg.exemptions.namespaces.has(a.name)) {
      const warning = exemptNamespaceWarning(a.name, policy, labelsOf(a.object), cfg.defaults)
      if (warning !== undefined) a.ctx.warnings.push(warning)
      return
    }
    if (a.operation !== 'UPDATE' || deps.podsInNamespace === undefined) return
    const old = policyFromLabels(labelsOf(a.oldObject), cfg.defaults).policy
    if (sameLevelVersion(old.enforce, policy.enforce) || policy.enforce.level === 'privileged') return
    let pods: Obj[]
    try {
      pods = await deps.podsInNamespace(a.name)
    } catch {
      a.ctx.warnings.push('failed to list pods while checking new PodSecurity enforce level')
      return
    }
    const results = pods
      .filter(p => { const rc = str(obj(p.spec).runtimeClassName); return rc === undefined || !cfg.exemptions.runtimeClasses.has(rc) })
      .map(p => ({ name: str(obj(p.metadata).name) ?? '', violations: evaluatePod(policy.enforce, podViewOf(p)) }))
    a.ctx.warnings.push(...existingPodWarnings(a.name, policy.enforce, results))
  }

  return {
    validating: {
      async admit (a) {
        if (a.operation === 'DELETE') return
        const { group, kind } = a.definition
        if (group === '' && kind === 'Pod') await admitPod(a)
        else if (group === '' && kind === 'Namespace') await admitNamespace(a)
        else if (isPodController(group, kind)) await admitController(a)
      }
    }
  }
}

