// The PodSecurity plugin's configuration (PodSecurityConfiguration): default policy per mode and exemptions.

import { latestVersion, MODES, parseLevel, parseVersion, type Policy } from './levels.js'

export const CONFIG_API_VERSIONS = [
  'pod-security.admission.config.orch.io/v1',
  'pod-security.admission.config.k8s.io/v1',
  'pod-security.admission.config.k8s.io/v1beta1',
  'pod-security.admission.config.k8s.io/v1alpha1'
]

export interface PodSecurityConfig {
  defaults: Policy
  exemptions: { usernames: Set<string>, runtimeClasses: Set<string>, namespaces: Set<string> }
}

const allPrivileged = (): Policy => ({
  enforce: { level: 'privileged', version: latestVersion },
  audit: { level: 'privileged', version: latestVersion },
  warn: { level: 'privileged', version: latestVersion }
})

function stringList (v: unknown, path: string, errors: string[]): Set<string> {
  if (v === undefined || v === null) return new Set()
  if (!Array.isArray(v)) {
    errors.push(`${path}: must be a list of strings`)
    return new Set()
  }
  const out = new Set<string>()
  v.forEach((x, i) => {
    if (typeof x !== 'string' || x === '') errors.push(`${path}[${i}]: must be a non-empty string`)
    else if (out.has(x)) errors.push(`${path}[${i}]: Duplicate value: ${JSON.stringify(x)}`)
    else out.add(x)
  })
  return out
}

/**
 * Reads a PodSecurityConfiguration (either API group); absent config = privileged:latest everywhere, no exemptions.
 * Throws an Error naming every invalid field, as kube-apiserver refuses to start on a bad admission config.
 */
export function parsePodSecurityConfig (raw: unknown): PodSecurityConfig {
  const empty = { defaults: allPrivileged(), exemptions: { usernames: new Set<string>(), runtimeClasses: new Set<string>(), namespaces: new Set<string>() } }
  if (raw === undefined || raw === null) return empty
  if (typeof raw !== 'object' || Array.isArray(raw)) throw new Error('PodSecurity configuration: must be an object')
  const c = raw as Record<string, unknown>
  const errors: string[] = []
  if (c.apiVersion !== undefined && !CONFIG_API_VERSIONS.includes(String(c.apiVersion))) {
    errors.push(`apiVersion: Unsupported value: ${JSON.stringify(c.apiVersion)}: supported values: ${CONFIG_API_VERSIONS.map(v => JSON.stringify(v)).join(', ')}`)
  }
  if (c.kind !== undefined && c.kind !== 'PodSecurityConfiguration') errors.push(`kind: Unsupported value: ${JSON.stringify(c.kind)}: supported values: "PodSecurityConfiguration"`)
  const d = (typeof c.defaults === 'object' && c.defaults !== null ? c.defaults : {}) as Record<string, unknown>
  const defaults = allPrivileged()
  for (const mode of MODES) {
    const lv = d[mode]
    if (lv !== undefined) {
      const level = typeof lv === 'string' ? parseLevel(lv) : undefined
      if (level === undefined) errors.push(`defaults.${mode}: Invalid value: ${JSON.stringify(lv)}: must be one of privileged, baseline, restricted`)
      else defaults[mode] = { ...defaults[mode], level }
    }
    const vv = d[`${mode}-version`]
    if (vv !== undefined) {
      const version = typeof vv === 'string' ? parseVersion(vv) : undefined
      if (version === undefined) errors.push(`defaults.${mode}-version: Invalid value: ${JSON.stringify(vv)}: must be "latest" or "v1.x"`)
      else defaults[mode] = { ...defaults[mode], version }
    }
  }
  const e = (typeof c.exemptions === 'object' && c.exemptions !== null ? c.exemptions : {}) as Record<string, unknown>
  const exemptions = {
    usernames: stringList(e.usernames, 'exemptions.usernames', errors),
    runtimeClasses: stringList(e.runtimeClasses, 'exemptions.runtimeClasses', errors),
    namespaces: stringList(e.namespaces, 'exemptions.namespaces', errors)
  }
  if (errors.length > 0) throw new Error(`invalid PodSecurity configuration: ${errors.join('; ')}`)
  return { defaults, exemptions }
}
