// Cross-field and range rules over the loaded configuration; the first broken rule stops start-up with one line.

import { isIP } from 'node:net'
import { invalidValue, ValueError } from './errors.js'
import { checkNodeLabels } from './labels.js'
import { ENFORCE_LEVELS } from './options.js'
import { findSetting, settingName, type SettingSpec } from './settings.js'
import { opensslCipherName } from './tls.js'
import { previousMinor, validateShowHidden } from '../../apiserver/metrics/component-metrics.js'
import { KUBELET_VERSION } from '../metrics/orchlet-metrics.js'
import type { ConfigLogger, OrchletConfig } from './types.js'

type Key = keyof OrchletConfig & string

function spec (key: string): SettingSpec {
  const s = findSetting(key)
  if (s === undefined) throw new Error(`no setting with key ${key}`)
  return s
}

/** `--flag (shown value)` (or `field (shown value)`) for naming another setting inside a rule. */
function ref (c: OrchletConfig, key: Key): string {
  const s = spec(key)
  return `${settingName(s)} (${s.kind.show(c[key] as never)})`
}

function fail (c: OrchletConfig, key: Key, rule: string): never {
  const s = spec(key)
  throw invalidValue(settingName(s), s.kind.show(c[key] as never), rule, s.key)
}

function range (c: OrchletConfig, key: Key, min: number, max: number): void {
  const v = c[key] as number
  if (v < min || v > max) fail(c, key, `must be between ${min} and ${max}`)
}

function atLeast (c: OrchletConfig, key: Key, min: number, what = `at least ${min}`): void {
  if ((c[key] as number) < min) fail(c, key, `must be ${what}`)
}

function needsGate (c: OrchletConfig, key: Key, gate: string, used: boolean): void {
  if (used && !c.featureGates.enabled(gate)) fail(c, key, `needs feature gate ${gate}`)
}

function checkImageGc (c: OrchletConfig): void {
  range(c, 'imageGCHighThresholdPercent', 0, 100)
  range(c, 'imageGCLowThresholdPercent', 0, 100)
  if (c.imageGCLowThresholdPercent > c.imageGCHighThresholdPercent) {
    fail(c, 'imageGCLowThresholdPercent', `must not be above ${ref(c, 'imageGCHighThresholdPercent')}`)
  }
  // The kubelet's imageMaximumGCAge rules: gated, not negative, and above the minimum age when set.
  needsGate(c, 'imageMaximumGCAge', 'ImageMaximumGCAge', c.imageMaximumGCAge !== 0)
  if (c.imageMaximumGCAge < 0) fail(c, 'imageMaximumGCAge', 'must not be negative')
  if (c.imageMaximumGCAge > 0 && c.imageMaximumGCAge <= c.imageMinimumGCAge) fail(c, 'imageMaximumGCAge', `must be greater than ${ref(c, 'imageMinimumGCAge')}`)
}

function checkAllocatable (c: OrchletConfig): void {
  const levels = c.enforceNodeAllocatable
  for (const level of levels) {
    if (!(ENFORCE_LEVELS as readonly string[]).includes(level)) fail(c, 'enforceNodeAllocatable', `unknown level "${level}"; must be ${ENFORCE_LEVELS.join(', ')}`)
  }
  if (new Set(levels).size !== levels.length) fail(c, 'enforceNodeAllocatable', 'lists a level twice')
  if (levels.includes('none') && levels.length > 1) fail(c, 'enforceNodeAllocatable', 'none must stand alone')
  if (levels.includes('system-reserved') && c.systemReservedCgroup === '') fail(c, 'enforceNodeAllocatable', 'system-reserved needs --system-reserved-cgroup')
  if (levels.includes('orch-reserved') && c.orchReservedCgroup === '') fail(c, 'enforceNodeAllocatable', 'orch-reserved needs --orch-reserved-cgroup')
  if (levels.includes('pods') && !c.cgroupsPerQOS) fail(c, 'enforceNodeAllocatable', `pods needs ${ref(c, 'cgroupsPerQOS')} to be true`)
  if (c.reservedSystemCPUs.length > 0 && (c.systemReservedCgroup !== '' || c.orchReservedCgroup !== '')) {
    fail(c, 'reservedSystemCPUs', 'cannot be used with --system-reserved-cgroup or --orch-reserved-cgroup')
  }
}

function checkRates (c: OrchletConfig): void {
  for (const key of ['eventRecordQPS', 'eventBurst', 'orchAPIQPS', 'orchAPIBurst', 'registryPullQPS', 'registryBurst'] as const) atLeast(c, key, 0)
  atLeast(c, 'maxPods', 1, 'above 0')
  atLeast(c, 'podsPerCore', 0)
  atLeast(c, 'nodeStatusMaxImages', -1)
  atLeast(c, 'maxOpenFiles', 1, 'above 0')
  range(c, 'oomScoreAdj', -1000, 1000)
  for (const key of ['port', 'readOnlyPort', 'healthzPort'] as const) range(c, key, 0, 65535)
  atLeast(c, 'containerLogMaxFiles', 2)
  atLeast(c, 'containerLogMaxSize', 1, 'above 0')
  atLeast(c, 'verbosity', 0)
}

function checkPeriods (c: OrchletConfig): void {
  for (const key of ['nodeStatusUpdateFrequency', 'syncFrequency', 'fileCheckFrequency', 'httpCheckFrequency', 'runtimeRequestTimeout', 'logFlushFrequency'] as const) {
    if (c[key] <= 0) fail(c, key, 'must be above 0')
  }
  for (const key of ['evictionPressureTransitionPeriod', 'streamingConnectionIdleTimeout', 'imageMinimumGCAge', 'authenticationTokenWebhookCacheTTL', 'authorizationWebhookCacheAuthorizedTTL', 'authorizationWebhookCacheUnauthorizedTTL'] as const) {
    if (c[key] < 0) fail(c, key, 'must not be negative')
  }
  if (!c.featureGates.enabled('CustomCPUCFSQuotaPeriod')) {
    if (c.cpuCFSQuotaPeriod !== 100) fail(c, 'cpuCFSQuotaPeriod', 'needs feature gate CustomCPUCFSQuotaPeriod to differ from 100ms')
  } else if (c.cpuCFSQuotaPeriod < 1 || c.cpuCFSQuotaPeriod > 1000) fail(c, 'cpuCFSQuotaPeriod', 'must be between 1ms and 1s')
}

function checkGated (c: OrchletConfig): void {
  needsGate(c, 'loggingFormat', 'LoggingBetaOptions', c.loggingFormat === 'json')
  needsGate(c, 'qosReserved', 'QOSReserved', Object.keys(c.qosReserved).length > 0)
  if (Object.keys(c.qosReserved).length > 0 && !c.cgroupsPerQOS) fail(c, 'qosReserved', `needs ${ref(c, 'cgroupsPerQOS')} to be true`)
  needsGate(c, 'logJsonInfoBufferSize', 'LoggingAlphaOptions', c.logJsonInfoBufferSize > 0)
  needsGate(c, 'logJsonSplitStream', 'LoggingAlphaOptions', c.logJsonSplitStream)
  needsGate(c, 'serverTLSBootstrap', 'RotateOrchletServerCertificate', c.serverTLSBootstrap)
  if (Object.keys(c.vmodule).length > 0 && c.loggingFormat !== 'text') fail(c, 'vmodule', `works only with the text format, not ${ref(c, 'loggingFormat')}`)
}

function checkNetwork (c: OrchletConfig): void {
  for (const ip of c.clusterDNS) if (isIP(ip) === 0) fail(c, 'clusterDNS', `"${ip}" is not a valid IP address`)
  for (const name of c.tlsCipherSuites) if (opensslCipherName(name) === undefined) fail(c, 'tlsCipherSuites', `unknown cipher suite "${name}"`)
  if ((c.tlsCertFile === '') !== (c.tlsPrivateKeyFile === '')) fail(c, c.tlsCertFile === '' ? 'tlsPrivateKeyFile' : 'tlsCertFile', 'must be set together with the other of --tls-cert-file and --tls-private-key-file')
  if (c.staticPodURL !== '') {
    let url: URL | undefined
    try { url = new URL(c.staticPodURL) } catch {}
    if (url === undefined || (url.protocol !== 'http:' && url.protocol !== 'https:')) fail(c, 'staticPodURL', 'must be an http or https URL')
  }
  if (c.podCIDR !== '') {
    const m = /^(.+)\/(\d+)$/.exec(c.podCIDR)
    const family = m === null ? 0 : isIP(m[1])
    if (m === null || family === 0 || Number(m[2]) > (family === 4 ? 32 : 128)) fail(c, 'podCIDR', 'must be a CIDR like 10.244.0.0/24')
  }
  try {
    checkNodeLabels(c.nodeLabels)
  } catch (err) {
    if (err instanceof ValueError) fail(c, 'nodeLabels', err.message)
    throw err
  }
}

function checkEviction (c: OrchletConfig): void {
  for (const t of c.evictionSoft) {
    if (c.evictionSoftGracePeriod[t.signal] === undefined) fail(c, 'evictionSoft', `no grace period in --eviction-soft-grace-period for ${t.signal}`)
  }
  for (const signal of Object.keys(c.evictionSoftGracePeriod)) {
    if (!c.evictionSoft.some(t => t.signal === signal)) fail(c, 'evictionSoftGracePeriod', `grace period for ${signal}, which has no --eviction-soft threshold`)
  }
}

/** The kubelet's graceful node shutdown rules (KubeletConfiguration validation). */
function checkShutdown (c: OrchletConfig): void {
  for (const key of ['shutdownGracePeriod', 'shutdownGracePeriodCriticalPods'] as const) if (c[key] < 0) fail(c, key, 'must not be negative')
  if (c.shutdownGracePeriodCriticalPods > c.shutdownGracePeriod) fail(c, 'shutdownGracePeriodCriticalPods', `must not be above ${ref(c, 'shutdownGracePeriod')}`)
  const byPriority = c.shutdownGracePeriodByPodPriority.length > 0
  needsGate(c, 'shutdownGracePeriod', 'GracefulNodeShutdown', c.shutdownGracePeriod > 0)
  needsGate(c, 'shutdownGracePeriodByPodPriority', 'GracefulNodeShutdown', byPriority)
  needsGate(c, 'shutdownGracePeriodByPodPriority', 'GracefulNodeShutdownBasedOnPodPriority', byPriority)
  if (byPriority && c.shutdownGracePeriod > 0) fail(c, 'shutdownGracePeriodByPodPriority', `cannot be used with ${ref(c, 'shutdownGracePeriod')}`)
}

export interface ValidateContext {
  logger: ConfigLogger
  /** Keys set by a config file or a flag (not defaulted). */
  explicit: ReadonlySet<string>
}

/** Throws a ConfigError (code ORCHLET_CONFIG_INVALID_VALUE) for the first rule broken; logs warnings for the soft ones. */
export function validateConfig (c: OrchletConfig, ctx: ValidateContext): void {
  checkImageGc(c)
  if (c.runOnce && c.enableServer) fail(c, 'runOnce', `cannot be used with ${ref(c, 'enableServer')}`)
  if (validateShowHidden(c.showHiddenMetricsForVersion, KUBELET_VERSION) !== undefined) {
    fail(c, 'showHiddenMetricsForVersion', `must be omitted or the previous minor version, ${previousMinor(KUBELET_VERSION)}`)
  }
  if (c.bootstrapOrchconfig !== '' && c.standalone) fail(c, 'bootstrapOrchconfig', 'needs --orchconfig, the path the connection file is written to')
  checkAllocatable(c)
  checkRates(c)
  checkPeriods(c)
  checkGated(c)
  checkNetwork(c)
  checkEviction(c)
  checkShutdown(c)
  if (c.podCIDR !== '' && !c.standalone) ctx.logger.warn('--pod-cidr is used only in standalone mode; ignored because --orchconfig is set')
  if (c.registryPullQPS === 0 && ctx.explicit.has('registryBurst')) ctx.logger.warn('--registry-burst is used only when --registry-qps is above 0; ignored')
}
