// The PodSecurity admission plugin family: the plugin factory, its configuration and the policy evaluation.

export { createPodSecurityPlugin, type PodSecurityDeps, AUDIT_ENFORCE_POLICY, AUDIT_EXEMPT, AUDIT_VIOLATIONS } from './plugin.js'
export { parsePodSecurityConfig, type PodSecurityConfig, CONFIG_API_VERSIONS } from './config.js'
export { evaluatePod, violatesMessage, wouldViolateMessage } from './evaluate.js'
export { policyFromLabels, parseLevel, parseVersion, type Level, type Policy, type LevelVersion } from './levels.js'
export { registryPodSecurityDeps } from './registry-deps.js'
