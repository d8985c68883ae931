// The admission plugin names kube-apiserver v1.29 knows, their fixed order, the default-on set, and which are enabled.

import type { Authorizer } from '../auth/types.js'
import type { Registry } from '../registry/types.js'
import type { MutatingAdmission, WriteAdmission } from '../registry/admission.js'

/** kube-apiserver v1.29's RecommendedPluginOrder: enabled plugins always run in this order, whatever the flags say. */
export const PLUGIN_ORDER = [
  'AlwaysAdmit', 'NamespaceAutoProvision', 'NamespaceLifecycle', 'NamespaceExists', 'SecurityContextDeny',
  'LimitPodHardAntiAffinityTopology', 'LimitRanger', 'ServiceAccount', 'NodeRestriction', 'TaintNodesByCondition',
  'AlwaysPullImages', 'ImagePolicyWebhook', 'PodSecurity', 'PodNodeSelector', 'Priority', 'DefaultTolerationSeconds',
  'PodTolerationRestriction', 'EventRateLimit', 'ExtendedResourceToleration', 'PersistentVolumeLabel',
  'DefaultStorageClass', 'StorageObjectInUseProtection', 'OwnerReferencesPermissionEnforcement',
  'PersistentVolumeClaimResize', 'RuntimeClass', 'CertificateApproval', 'CertificateSigning', 'ClusterTrustBundleAttest',
  'CertificateSubjectRestriction', 'DefaultIngressClass', 'DenyServiceExternalIPs', 'MutatingAdmissionWebhook',
  'ValidatingAdmissionPolicy', 'ValidatingAdmissionWebhook', 'ResourceQuota', 'AlwaysDeny'
] as const

/** v1.29's plugins that are on unless --disable-admission-plugins names them (the complement of DefaultOffAdmissionPlugins). */
export const DEFAULT_ON_PLUGINS: readonly string[] = [
  'NamespaceLifecycle', 'LimitRanger', 'ServiceAccount', 'TaintNodesByCondition', 'PodSecurity', 'Priority',
  'DefaultTolerationSeconds', 'DefaultStorageClass', 'StorageObjectInUseProtection', 'PersistentVolumeClaimResize',
  'RuntimeClass', 'CertificateApproval', 'CertificateSigning', 'ClusterTrustBundleAttest', 'CertificateSubjectRestriction',
  'DefaultIngressClass', 'MutatingAdmissionWebhook', 'ValidatingAdmissionPolicy', 'ValidatingAdmissionWebhook', 'ResourceQuota'
]

/** What every plugin factory is given. The registry is a getter: plugins are built before the registry they guard. */
export interface AdmissionDeps {
  registry: () => Registry
  authorizer?: Authorizer
  /** Milliseconds since the epoch (tests pin it). */
  now: () => number
}

/** One plugin's phases; a plugin may be mutating, validating or both. */
export interface AdmissionPlugin {
  mutating?: MutatingAdmission
  validating?: WriteAdmission
}

/**
 * Builds one plugin from its dependencies and its configuration (the AdmissionConfiguration entry's `configuration`
 * or the parsed file at its `path`; undefined when none). Throws an Error whose message says what is wrong.
 */
export type AdmissionPluginFactory = (deps: AdmissionDeps, config?: unknown) => AdmissionPlugin

export class AdmissionOptionsError extends Error {
  override readonly name = 'AdmissionOptionsError'
}

const KNOWN = new Set<string>(PLUGIN_ORDER)

export function isKnownPlugin (name: string): boolean { return KNOWN.has(name) }

/**
 * The enabled plugin names in PLUGIN_ORDER: the default-on set plus `enable` minus `disable`, as kube-apiserver's
 * admission options compute them; unknown and overlapping names are refused in its words.
 */
export function enabledPlugins (enable: string[], disable: string[]): string[] {
  const errors: string[] = []
  for (const p of enable) if (!KNOWN.has(p)) errors.push(`enable-admission-plugins plugin "${p}" is unknown`)
  for (const p of disable) if (!KNOWN.has(p)) errors.push(`disable-admission-plugins plugin "${p}" is unknown`)
  const both = enable.filter(p => disable.includes(p))
  if (both.length > 0) errors.push(`[${both.join(' ')}] in enable-admission-plugins and disable-admission-plugins overlapped`)
  if (errors.length > 0) throw new AdmissionOptionsError(errors.join(', '))
  const on = new Set([...DEFAULT_ON_PLUGINS, ...enable])
  for (const p of disable) on.delete(p)
  return PLUGIN_ORDER.filter(p => on.has(p))
}
