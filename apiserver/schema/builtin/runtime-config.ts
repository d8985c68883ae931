// --runtime-config (spec document 1 §9.1.4): which built-in group versions and resources are served.
//
// A comma-separated list of `<key>[=<value>]`, a missing value meaning true. Keys: `api/all`, `api/ga`, `api/beta`,
// `api/alpha`, `<group>/<version>` (`v1` or `api/v1` for the core group) and `<group>/<version>/<resource>`. Group
// names may be spelled as orch's (`resource.orch.io`) or Kubernetes' (`resource.k8s.io`); they name the same group.
// The most specific key wins: resource, then group version, then the stability class, then `api/all`.

export class RuntimeConfigError extends Error {}

export interface RuntimeConfig {
  /** Normalised key (orch group spelling) -> enabled. */
  readonly keys: ReadonlyMap<string, boolean>
}

export const emptyRuntimeConfig: RuntimeConfig = { keys: new Map() }

/** `rbac.authorization.k8s.io` -> `rbac.authorization.orch.io`; other names unchanged. */
const orchSpelling = (group: string): string => group.replace(/(^|\.)k8s\.io$/, '$1orch.io')

/** Go's strconv.ParseBool. */
export function parseGoBool (value: string): boolean | undefined {
  if (['1', 't', 'T', 'TRUE', 'true', 'True'].includes(value)) return true
  if (['0', 'f', 'F', 'FALSE', 'false', 'False'].includes(value)) return false
  return undefined
}

/**
 * Parses the flag's value against the group versions that exist (`known`: `group/version` in orch spelling,
 * `v1` for the core group). Unknown group versions and values other than booleans are errors, as in kube-apiserver.
 */
export function parseRuntimeConfig (flag: string, known: ReadonlySet<string>): RuntimeConfig {
  const keys = new Map<string, boolean>()
  for (const raw of flag.split(',').map(s => s.trim()).filter(s => s !== '')) {
    const eq = raw.indexOf('=')
    const key = eq < 0 ? raw : raw.slice(0, eq)
    const value = eq < 0 ? true : parseGoBool(raw.slice(eq + 1))
    if (value === undefined) throw new RuntimeConfigError(`invalid value of ${key}: ${raw.slice(eq + 1)}, err: strconv.ParseBool: parsing "${raw.slice(eq + 1)}": invalid syntax`)
    keys.set(normaliseKey(key, known), value)
  }
  return { keys }
}

function normaliseKey (key: string, known: ReadonlySet<string>): string {
  if (['api/all', 'api/ga', 'api/beta', 'api/alpha'].includes(key)) return key
  const parts = key.split('/')
  // The core group: `v1`, `api/v1`, `v1/<resource>`, `api/v1/<resource>`.
  if (parts[0] === 'api') parts.shift()
  const [gv, resource] = parts[0] === 'v1' && (parts.length === 1 || parts.length === 2)
    ? ['v1', parts[1]]
    : parts.length === 2 || parts.length === 3 ? [`${orchSpelling(parts[0])}/${parts[1]}`, parts[2]] : [undefined, undefined]
  if (gv === undefined || !known.has(gv)) throw new RuntimeConfigError(`unknown api groups ${key}`)
  return resource === undefined ? gv : `${gv}/${resource}`
}

/** Stability class of a version name: v1 -> ga, v1beta3 -> beta, v1alpha2 -> alpha. */
function stability (version: string): 'ga' | 'beta' | 'alpha' {
  return version.includes('alpha') ? 'alpha' : version.includes('beta') ? 'beta' : 'ga'
}

/** Whether a built-in resource is served under the configuration (`group` in orch spelling). */
export function isServed (c: RuntimeConfig, e: { group: string, version: string, plural: string, offByDefault?: boolean }): boolean {
  const gv = e.group === '' ? e.version : `${e.group}/${e.version}`
  for (const key of [`${gv}/${e.plural}`, gv, `api/${stability(e.version)}`, 'api/all']) {
    const v = c.keys.get(key)
    if (v !== undefined) return v
  }
  return e.offByDefault !== true
}
