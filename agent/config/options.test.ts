import t from 'tap'
import { OPTIONS } from './options.js'
import { defaultValue, loadOrchletConfig } from './load.js'
import { helpText, versionLine } from './help.js'
import { CONFIG_FILE_DEPRECATION } from './options.js'

/** Every option's default in the units of OrchletConfig (ms, bytes, millicores, percents), from spec §3. */
const DEFAULTS: Record<string, unknown> = {
  address: "0.0.0.0",
  allowedUnsafeSysctls: [],
  anonymousAuth: true,
  authenticationTokenWebhook: false,
  authenticationTokenWebhookCacheTTL: 120000,
  authorizationMode: "AlwaysAllow",
  authorizationWebhookCacheAuthorizedTTL: 300000,
  authorizationWebhookCacheUnauthorizedTTL: 30000,
  bootstrapOrchconfig: "",
  certDir: "/var/lib/orchlet/pki",
  cgroupDriver: "cgroupfs",
  cgroupRoot: "",
  cgroupsPerQOS: true,
  clientCAFile: "",
  cloudConfig: "",
  cloudProvider: "",
  clusterDNS: [],
  clusterDomain: "",
  config: "",
  configDir: "",
  containerLogMaxFiles: 5,
  containerLogMaxSize: 10485760,
  containerRuntimeEndpoint: "unix:///run/containerd/containerd.sock",
  enableContentionProfiling: false,
  cpuCFSQuota: true,
  cpuCFSQuotaPeriod: 100,
  cpuManagerPolicy: "none",
  cpuManagerPolicyOptions: {},
  cpuManagerReconcilePeriod: 10000,
  enableControllerAttachDetach: true,
  enableDebuggingHandlers: true,
  enableServer: true,
  enforceNodeAllocatable: ["pods"],
  eventBurst: 100,
  eventRecordQPS: 50,
  evictionHard: [{"signal":"imagefs.available","operator":"LessThan","value":{"percent":15}},{"signal":"memory.available","operator":"LessThan","value":{"quantity":104857600}},{"signal":"nodefs.available","operator":"LessThan","value":{"percent":10}},{"signal":"nodefs.inodesFree","operator":"LessThan","value":{"percent":5}}],
  evictionMaxPodGracePeriod: 0,
  evictionMinimumReclaim: {},
  evictionPressureTransitionPeriod: 300000,
  evictionSoft: [],
  evictionSoftGracePeriod: {},
  exitOnLockContention: false,
  experimentalAllocatableIgnoreEviction: false,
  experimentalMounterPath: "mount",
  failSwapOn: true,
  featureGateValues: {},
  fileCheckFrequency: 20000,
  hairpinMode: "promiscuous-bridge",
  healthzBindAddress: "127.0.0.1",
  healthzPort: 10248,
  help: false,
  hostnameOverride: "",
  httpCheckFrequency: 20000,
  imageCredentialProviderBinDir: "",
  imageCredentialProviderConfig: "",
  imageGCHighThresholdPercent: 85,
  imageGCLowThresholdPercent: 80,
  imageServiceEndpoint: "",
  keepTerminatedPodVolumes: false,
  kernelMemcgNotification: false,
  orchAPIBurst: 100,
  contentType: "application/vnd.orch.protobuf",
  orchAPIQPS: 50,
  orchReserved: {},
  orchReservedCgroup: "",
  orchconfig: "",
  orchletCgroups: "",
  localStorageCapacityIsolation: true,
  lockFile: "",
  logFlushFrequency: 5000,
  logJsonInfoBufferSize: 0,
  logJsonSplitStream: false,
  loggingFormat: "text",
  makeIPTablesUtilChains: true,
  staticPodURL: "",
  staticPodURLHeader: {},
  maxOpenFiles: 1000000,
  maxPods: 110,
  maximumDeadContainers: -1,
  maximumDeadContainersPerContainer: 1,
  memoryManagerPolicy: "None",
  minimumContainerTTLDuration: 0,
  imageMinimumGCAge: 120000,
  nodeIP: [],
  nodeLabels: {},
  nodeStatusMaxImages: 50,
  nodeStatusUpdateFrequency: 10000,
  oomScoreAdj: -999,
  podCIDR: "",
  podInfraContainerImage: "registry.k8s.io/pause:3.9",
  staticPodPath: "",
  podPidsLimit: -1,
  podsPerCore: 0,
  port: 10250,
  protectKernelDefaults: false,
  providerID: "",
  qosReserved: {},
  readOnlyPort: 10255,
  registerNode: true,
  registerSchedulable: true,
  registerWithTaints: [],
  registryBurst: 10,
  registryPullQPS: 5,
  reservedSystemCPUs: [],
  reservedMemory: [],
  resolvConf: "/etc/resolv.conf",
  showHiddenMetricsForVersion: "",
  rootDir: "/var/lib/orchlet",
  rotateCertificates: false,
  serverTLSBootstrap: false,
  runOnce: false,
  runtimeCgroups: "",
  runtimeRequestTimeout: 120000,
  seccompDefault: false,
  serializeImagePulls: true,
  streamingConnectionIdleTimeout: 14400000,
  syncFrequency: 60000,
  systemCgroups: "",
  systemReserved: {},
  systemReservedCgroup: "",
  tlsCertFile: "",
  tlsCipherSuites: [],
  tlsMinVersion: "",
  tlsPrivateKeyFile: "",
  topologyManagerPolicy: "none",
  topologyManagerPolicyOptions: {},
  topologyManagerScope: "container",
  verbosity: 0,
  version: false,
  vmodule: {},
  volumePluginDir: "/usr/libexec/orch/orchlet-plugins/volume/exec/",
  volumeStatsAggPeriod: 60000,
}

t.test('every option has the default of the spec', async t => {
  t.same(OPTIONS.map(o => o.key).sort(), Object.keys(DEFAULTS).sort(), 'the table and this list name the same options')
  for (const opt of OPTIONS) t.same(defaultValue(opt), DEFAULTS[opt.key], `--${opt.flag}`)
})

t.test('a configuration loaded from no flags holds the defaults', async t => {
  const warnings: string[] = []
  const c = await loadOrchletConfig([], {}, { logger: { warn: m => warnings.push(m) } })
  for (const [key, value] of Object.entries(DEFAULTS)) {
    if (key === 'help' || key === 'version') continue
    if (key === 'imageServiceEndpoint') t.equal(c.imageServiceEndpoint, DEFAULTS.containerRuntimeEndpoint, 'image endpoint follows the runtime endpoint')
    else t.same((c as Record<string, unknown>)[key], value, key)
  }
  t.equal(c.standalone, true)
  t.equal(c.featureGates.enabled('LoggingBetaOptions'), true)
  t.same(warnings, [])
})

t.test('flag names and config fields are unique', async t => {
  const flags = OPTIONS.map(o => o.flag)
  t.equal(new Set(flags).size, flags.length)
  const fields = OPTIONS.flatMap(o => o.field === undefined ? [] : [o.field])
  t.equal(new Set(fields).size, fields.length)
  t.equal(new Set(OPTIONS.map(o => o.key)).size, OPTIONS.length)
})

t.test('flags backed by a config field are deprecated except the logging ones and --provider-id', async t => {
  const kept = OPTIONS.filter(o => o.field !== undefined && o.deprecated === undefined).map(o => o.flag).sort()
  t.same(kept, ['log-flush-frequency', 'provider-id', 'v', 'vmodule'])
  t.equal(OPTIONS.find(o => o.flag === 'max-pods')?.deprecated, CONFIG_FILE_DEPRECATION)
  t.equal(OPTIONS.find(o => o.flag === 'node-labels')?.field, undefined, '--node-labels has no config field')
  t.equal(OPTIONS.find(o => o.flag === 'eviction-hard')?.field, 'evictionHard')
  t.equal(OPTIONS.find(o => o.flag === 'anonymous-auth')?.field, 'authentication.anonymous.enabled')
})

t.test('--help lists every option with its default', async t => {
  const help = helpText()
  for (const opt of OPTIONS) t.match(help, new RegExp(`--${opt.flag}\\b`), `--${opt.flag}`)
  t.match(help, '  -v, --v int32')
  t.match(help, '  -h, --help')
  t.match(help, /--max-pods int32\n {8}Pods this node may run \(default 110\)/)
  t.match(help, /--eviction-hard signal<value,...\n.*\(default "imagefs.available<15%,memory.available<100Mi,nodefs.available<10%,nodefs.inodesFree<5%"\)/)
  t.match(help, /--sync-frequency duration\n.*\(default 1m0s\)/)
  t.match(help, /--qos-reserved .*\n {8}\[alpha\] /)
  t.match(help, /Options are:\n {10}APIResponseCompression=true\|false \(BETA - default=true\)/)
  t.match(help, /--experimental-mounter-path path\n.*\(DEPRECATED: will be removed in 1.25 or later. in favor of using CSI.\)/)
})

t.test('--version prints the orchlet version', async t => {
  t.equal(versionLine(), 'orchlet v1.29.0-orch')
  t.equal(versionLine(new URL('../../package.json', import.meta.url).pathname), 'orchlet v1.29.0-orch')
})
