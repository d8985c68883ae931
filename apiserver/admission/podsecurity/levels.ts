// Pod Security Standards levels and policy versions, and the policy a namespace's labels ask for.

export type Level = 'privileged' | 'baseline' | 'restricted'
export const LEVELS: readonly Level[] = ['privileged', 'baseline', 'restricted']

/** The newest minor version this library knows; later pinned versions are evaluated as this one. */
export const LATEST_MINOR = 29

/** A policy version: `latest`, or minor of `v1.<minor>`. */
export interface Version { latest: boolean, minor: number }

export const latestVersion: Version = { latest: true, minor: LATEST_MINOR }

export interface LevelVersion { level: Level, version: Version }

export type Mode = 'enforce' | 'audit' | 'warn'
export const MODES: readonly Mode[] = ['enforce', 'audit', 'warn']

/** The effective policy of a namespace: one level and version per mode. */
export type Policy = Record<Mode, LevelVersion>

export function parseLevel (s: string): Level | undefined {
  return (LEVELS as readonly string[]).includes(s) ? s as Level : undefined
}

/** `latest` or `v1.N` (N without leading zeros, as the policy library accepts). */
export function parseVersion (s: string): Version | undefined {
  if (s === 'latest') return latestVersion
  const m = /^v1\.(0|[1-9][0-9]*)$/.exec(s)
  if (m === null) return undefined
  const minor = Number(m[1])
  if (!Number.isSafeInteger(minor)) return undefined
  return { latest: false, minor }
}

/** The minor a version is evaluated at: pinned versions newer than this library behave as latest. */
export function effectiveMinor (v: Version): number {
  return v.latest ? LATEST_MINOR : Math.min(v.minor, LATEST_MINOR)
}

export function versionString (v: Version): string {
  return v.latest ? 'latest' : `v1.${v.minor}`
}

/** As Kubernetes prints a policy: `restricted:latest`, `baseline:v1.24`. */
export function levelVersionString (lv: LevelVersion): string {
  return `${lv.level}:${versionString(lv.version)}`
}

export function sameLevelVersion (a: LevelVersion, b: LevelVersion): boolean {
  return a.level === b.level && a.version.latest === b.version.latest && a.version.minor === b.version.minor
}

/** Label prefixes read from a namespace; orch's own first, Kubernetes' accepted as written for Kubernetes. */
export const LABEL_PREFIXES = ['pod-security.orch.io/', 'pod-security.kubernetes.io/'] as const

/** A label the policy reads, as `<prefix><mode>` or `<prefix><mode>-version`. */
export interface LabelError { label: string, value: string, message: string }

interface LabelValue { label: string, value: string }

function findLabel (labels: Record<string, string>, suffix: string): LabelValue | undefined {
  for (const p of LABEL_PREFIXES) {
    const label = p + suffix
    if (typeof labels[label] === 'string') return { label, value: labels[label] }
  }
  return undefined
}

/**
 * The policy the labels ask for, each mode falling back to `defaults`; `errors` lists invalid values. As the policy
 * library, an invalid level fails closed (restricted) and an invalid version reads as latest; an explicitly labelled
 * enforce level stricter than warn's raises warn to it when no warn level label is set.
 */
export function policyFromLabels (labels: Record<string, string> | undefined, defaults: Policy): { policy: Policy, errors: LabelError[] } {
  const l = labels ?? {}
  const errors: LabelError[] = []
  const policy: Policy = { ...defaults }
  const hasLevel: Record<Mode, boolean> = { enforce: false, audit: false, warn: false }
  const hasVersion: Record<Mode, boolean> = { enforce: false, audit: false, warn: false }
  for (const mode of MODES) {
    let { level, version } = defaults[mode]
    const lv = findLabel(l, mode)
    if (lv !== undefined) {
      const parsed = parseLevel(lv.value)
      if (parsed === undefined) errors.push({ ...lv, message: `must be one of ${LEVELS.join(', ')}` })
      hasLevel[mode] = parsed !== undefined
      level = parsed ?? 'restricted'
    }
    const vv = findLabel(l, `${mode}-version`)
    if (vv !== undefined) {
      const parsed = parseVersion(vv.value)
      if (parsed === undefined) errors.push({ ...vv, message: 'must be "latest" or "v1.x"' })
      hasVersion[mode] = parsed !== undefined
      version = parsed ?? latestVersion
    }
    policy[mode] = { level, version }
  }
  if (!hasLevel.warn && hasLevel.enforce && levelRank(policy.enforce.level) > levelRank(policy.warn.level)) {
    policy.warn = { level: policy.enforce.level, version: !hasVersion.warn && hasVersion.enforce ? policy.enforce.version : policy.warn.version }
  }
  return { policy, errors }
}

export function levelRank (l: Level): number {
  return LEVELS.indexOf(l)
}
