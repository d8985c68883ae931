// kube-apiserver's admission flags (--enable-admission-plugins, --disable-admission-plugins,
// --admission-control-config-file), read into the AdmissionOptions buildAdmission takes.

import { UsageError, type FlagSpec, type Flags } from './args.js'
import { AdmissionOptionsError, enabledPlugins } from '../admission/plugins.js'
import { loadAdmissionConfig } from '../admission/config.js'
import type { AdmissionOptions } from '../admission/build.js'

export const ADMISSION_FLAGS: FlagSpec[] = [
  { name: 'enable-admission-plugins', kind: 'string', help: 'comma-separated admission plugins to enable besides the default-on ones (the order does not matter: plugins run in kube-apiserver\'s fixed order); orch enables NodeRestriction as kubeadm does', default: 'NodeRestriction' },
  { name: 'disable-admission-plugins', kind: 'string', help: 'comma-separated admission plugins to disable, default-on ones included' },
  { name: 'admission-control-config-file', kind: 'string', help: 'AdmissionConfiguration file with per-plugin configuration' }
]

const list = (v: unknown): string[] => typeof v === 'string' ? v.split(',').map(s => s.trim()).filter(s => s !== '') : []

/** The plugins `orch up` and `orch apiserver` run without admission flags: the default-on set and NodeRestriction. */
export function defaultAdmission (): AdmissionOptions {
  return { plugins: enabledPlugins(['NodeRestriction'], []), configs: new Map() }
}

/** The enabled plugins and their configuration; a UsageError in kube-apiserver's words for bad names or files. */
export async function parseAdmissionFlags (flags: Flags): Promise<AdmissionOptions> {
  try {
    const plugins = enabledPlugins(list(flags['enable-admission-plugins']), list(flags['disable-admission-plugins']))
    const file = flags['admission-control-config-file']
    const configs = typeof file === 'string' && file !== '' ? await loadAdmissionConfig(file) : new Map<string, unknown>()
    return { plugins, configs }
  } catch (err) {
    if (err instanceof AdmissionOptionsError) throw new UsageError(err.message)
    throw err
  }
}
