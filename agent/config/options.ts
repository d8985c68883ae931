// The option table of spec document 2 §3: every orchlet flag with its kind, default, config-file field and help.

import * as k from './kinds.js'
import type { Kind } from './kinds.js'

export interface OptionSpec<K extends string = string, T = any> {
  /** Long flag name without dashes. */
  readonly flag: string
  /** Property of OrchletConfig that holds the value. */
  readonly key: K
  readonly kind: Kind<T>
  /** Default in the spec's own text, parsed by the kind (absent: the kind's zero value). */
  readonly default?: string
  /** Help text for a default that is not a literal value. */
  readonly defaultText?: string
  /** Dotted path in OrchletConfiguration; absent for flag-only options. */
  readonly field?: string
  readonly short?: string
  /** Deprecation message logged when the flag is used. */
  readonly deprecated?: string
  readonly stage?: 'alpha' | 'beta'
  readonly help: string
}

export const CONFIG_FILE_DEPRECATION = "This parameter should be set via the config file specified by the orchlet's --config flag."

type Extra = Partial<Pick<OptionSpec, 'default' | 'defaultText' | 'short' | 'deprecated' | 'stage'>> & { keep?: boolean }

/** A flag backed by a config-file field: deprecated in favour of the file, as every such kubelet flag is (unless `keep`). */
function cfg<K extends string, T> (flag: string, key: K, kind: Kind<T>, field: string, help: string, extra: Extra = {}): OptionSpec<K, T> {
  const { keep, ...rest } = extra
  return { flag, key, kind, field, help, ...(keep === true ? {} : { deprecated: CONFIG_FILE_DEPRECATION }), ...rest }
}

/** A flag with no config-file field. */
function flagOnly<K extends string, T> (flag: string, key: K, kind: Kind<T>, help: string, extra: Extra = {}): OptionSpec<K, T> {
  const { keep: _keep, ...rest } = extra
  return { flag, key, kind, help, ...rest }
}

export const TLS_VERSIONS = ['VersionTLS10', 'VersionTLS11', 'VersionTLS12', 'VersionTLS13'] as const
export const ENFORCE_LEVELS = ['none', 'pods', 'system-reserved', 'orch-reserved'] as const

export const OPTIONS = [
  cfg('address', 'address', k.ip, 'address', 'IP address to serve on (0.0.0.0 or :: for every interface)', { default: '0.0.0.0' }),
  cfg('allowed-unsafe-sysctls', 'allowedUnsafeSysctls', k.stringList, 'allowedUnsafeSysctls', 'Comma list of unsafe sysctls, or patterns ending in *, that pods may set'),
  cfg('anonymous-auth', 'anonymousAuth', k.bool, 'authentication.anonymous.enabled', 'Let requests no other method authenticates through as system:anonymous in group system:unauthenticated', { default: 'true' }),
  cfg('authentication-token-webhook', 'authenticationTokenWebhook', k.bool, 'authentication.webhook.enabled', 'Check bearer tokens with the TokenReview API'),
  cfg('authentication-token-webhook-cache-ttl', 'authenticationTokenWebhookCacheTTL', k.duration, 'authentication.webhook.cacheTTL', 'How long token review answers are cached', { default: '2m0s' }),
  cfg('authorization-mode', 'authorizationMode', k.enumOf(['AlwaysAllow', 'Webhook'] as const), 'authorization.mode', 'How requests to the server are authorized: AlwaysAllow, or Webhook (SubjectAccessReview API)', { default: 'AlwaysAllow' }),
  cfg('authorization-webhook-cache-authorized-ttl', 'authorizationWebhookCacheAuthorizedTTL', k.duration, 'authorization.webhook.cacheAuthorizedTTL', "How long 'authorized' answers are cached", { default: '5m0s' }),
  cfg('authorization-webhook-cache-unauthorized-ttl', 'authorizationWebhookCacheUnauthorizedTTL', k.duration, 'authorization.webhook.cacheUnauthorizedTTL', "How long 'unauthorized' answers are cached", { default: '30s' }),
  flagOnly('bootstrap-orchconfig', 'bootstrapOrchconfig', k.path, 'Connection file used to request a client certificate when the --orchconfig file is missing; the result is written to the --orchconfig path and the key to --cert-dir'),
  flagOnly('cert-dir', 'certDir', k.path, 'Directory of the TLS certificates; ignored when --tls-cert-file and --tls-private-key-file are set', { default: '/var/lib/orchlet/pki' }),
  cfg('cgroup-driver', 'cgroupDriver', k.enumOf(['cgroupfs', 'systemd'] as const), 'cgroupDriver', 'How cgroups are manipulated on the host: cgroupfs or systemd', { default: 'cgroupfs' }),
  cfg('cgroup-root', 'cgroupRoot', k.string, 'cgroupRoot', "Root cgroup for pods; empty uses the runtime's default"),
  cfg('cgroups-per-qos', 'cgroupsPerQOS', k.bool, 'cgroupsPerQOS', 'Create the QoS and pod cgroup hierarchy', { default: 'true' }),
  cfg('client-ca-file', 'clientCAFile', k.path, 'authentication.x509.clientCAFile', "Authenticate clients whose certificate this CA signed, as the certificate's CommonName"),
  flagOnly('cloud-config', 'cloudConfig', k.path, 'Path of the cloud provider configuration file', { deprecated: 'will be removed in 1.25 or later, in favor of removing cloud provider code from the orchlet.' }),
  flagOnly('cloud-provider', 'cloudProvider', k.string, "Cloud provider name; empty for none, 'external' for an external provider"),
  cfg('cluster-dns', 'clusterDNS', k.stringList, 'clusterDNS', 'Comma list of DNS server IPs for pods with dnsPolicy ClusterFirst; all must serve the same records'),
  cfg('cluster-domain', 'clusterDomain', k.string, 'clusterDomain', "Cluster domain added to containers' DNS search list"),
  flagOnly('config', 'config', k.path, 'OrchletConfiguration file to start from (absolute, or relative to the working directory); flags override it'),
  flagOnly('config-dir', 'configDir', k.path, 'Directory of *.conf drop-ins merged over --config in lexical order (also ORCHLET_CONFIG_DROPIN_DIR_ALPHA)'),
  cfg('container-log-max-files', 'containerLogMaxFiles', k.int32, 'containerLogMaxFiles', 'Most log files kept per container; at least 2', { default: '5', stage: 'beta' }),
  cfg('container-log-max-size', 'containerLogMaxSize', k.bytes, 'containerLogMaxSize', 'Size (e.g. 10Mi) a container log reaches before it is rotated', { default: '10Mi', stage: 'beta' }),
  cfg('container-runtime-endpoint', 'containerRuntimeEndpoint', k.string, 'containerRuntimeEndpoint', 'Runtime service endpoint: a unix socket on Linux (npipe or tcp on Windows)', { default: 'unix:///run/containerd/containerd.sock' }),
  cfg('contention-profiling', 'enableContentionProfiling', k.bool, 'enableContentionProfiling', 'Block profiling when profiling is on'),
  cfg('cpu-cfs-quota', 'cpuCFSQuota', k.bool, 'cpuCFSQuota', 'Enforce CPU CFS quota for containers with CPU limits', { default: 'true' }),
  cfg('cpu-cfs-quota-period', 'cpuCFSQuotaPeriod', k.duration, 'cpuCFSQuotaPeriod', 'CPU CFS quota period (cpu.cfs_period_us)', { default: '100ms' }),
  cfg('cpu-manager-policy', 'cpuManagerPolicy', k.enumOf(['none', 'static'] as const), 'cpuManagerPolicy', 'CPU manager policy: none or static', { default: 'none' }),
  cfg('cpu-manager-policy-options', 'cpuManagerPolicyOptions', k.stringMap, 'cpuManagerPolicyOptions', 'key=value options that tune the CPU manager policy'),
  cfg('cpu-manager-reconcile-period', 'cpuManagerReconcilePeriod', k.duration, 'cpuManagerReconcilePeriod', 'How often the CPU manager reconciles', { default: '10s', stage: 'alpha' }),
  cfg('enable-controller-attach-detach', 'enableControllerAttachDetach', k.bool, 'enableControllerAttachDetach', 'The attach/detach controller attaches volumes to this node; the orchlet does not', { default: 'true' }),
  cfg('enable-debugging-handlers', 'enableDebuggingHandlers', k.bool, 'enableDebuggingHandlers', 'Serve endpoints for logs and running commands in containers', { default: 'true' }),
  cfg('enable-server', 'enableServer', k.bool, 'enableServer', "Run the orchlet's server", { default: 'true' }),
  cfg('enforce-node-allocatable', 'enforceNodeAllocatable', k.stringList, 'enforceNodeAllocatable', 'Comma list of allocatable enforcement levels: none, pods, system-reserved, orch-reserved; the last two need their cgroup options and none stands alone', { default: 'pods' }),
  cfg('event-burst', 'eventBurst', k.int32, 'eventBurst', 'Burst of event records; at least 0, 0 selects the default', { default: '100' }),
  cfg('event-qps', 'eventRecordQPS', k.int32, 'eventRecordQPS', 'Event records per second; at least 0, 0 selects the default', { default: '50' }),
  cfg('eviction-hard', 'evictionHard', k.thresholds, 'evictionHard', 'Thresholds (signal<quantity or signal<percent) that evict pods at once', { default: 'imagefs.available<15%,memory.available<100Mi,nodefs.available<10%,nodefs.inodesFree<5%' }),
  cfg('eviction-max-pod-grace-period', 'evictionMaxPodGracePeriod', k.int32, 'evictionMaxPodGracePeriod', 'Longest grace period, in seconds, given to pods evicted by a soft threshold; negative defers to the pod'),
  cfg('eviction-minimum-reclaim', 'evictionMinimumReclaim', k.reclaims, 'evictionMinimumReclaim', 'Least amount reclaimed per signal (e.g. imagefs.available=2Gi) once eviction starts'),
  cfg('eviction-pressure-transition-period', 'evictionPressureTransitionPeriod', k.duration, 'evictionPressureTransitionPeriod', 'How long to wait before leaving an eviction pressure condition', { default: '5m0s' }),
  cfg('eviction-soft', 'evictionSoft', k.thresholds, 'evictionSoft', 'Thresholds that evict pods once they have held for their grace period'),
  cfg('eviction-soft-grace-period', 'evictionSoftGracePeriod', k.gracePeriods, 'evictionSoftGracePeriod', 'How long each soft threshold must hold (e.g. memory.available=1m30s)'),
  flagOnly('exit-on-lock-contention', 'exitOnLockContention', k.bool, 'Exit when another process contends for the lock file'),
  flagOnly('experimental-allocatable-ignore-eviction', 'experimentalAllocatableIgnoreEviction', k.bool, 'Leave hard eviction thresholds out of node allocatable', { default: 'false', deprecated: 'will be removed in 1.25 or later.' }),
  flagOnly('experimental-mounter-path', 'experimentalMounterPath', k.path, 'Mounter binary', { default: 'mount', deprecated: 'will be removed in 1.25 or later. in favor of using CSI.' }),
  cfg('fail-swap-on', 'failSwapOn', k.bool, 'failSwapOn', 'Refuse to start when swap is on', { default: 'true' }),
  cfg('feature-gates', 'featureGateValues', k.boolMap, 'featureGates', 'Comma list of Gate=true|false feature gates (AllAlpha and AllBeta switch whole stages)'),
  cfg('file-check-frequency', 'fileCheckFrequency', k.duration, 'fileCheckFrequency', 'How often static pod files are read again', { default: '20s' }),
  cfg('hairpin-mode', 'hairpinMode', k.enumOf(['promiscuous-bridge', 'hairpin-veth', 'none'] as const), 'hairpinMode', 'How hairpin NAT is set up: promiscuous-bridge, hairpin-veth or none', { default: 'promiscuous-bridge' }),
  cfg('healthz-bind-address', 'healthzBindAddress', k.ip, 'healthzBindAddress', 'IP address of the healthz server', { default: '127.0.0.1' }),
  cfg('healthz-port', 'healthzPort', k.port, 'healthzPort', 'Port of the healthz server; 0 disables it', { default: '10248' }),
  flagOnly('help', 'help', k.bool, 'Print this help and exit', { short: 'h' }),
  flagOnly('hostname-override', 'hostnameOverride', k.string, 'Node name to use instead of the hostname'),
  cfg('http-check-frequency', 'httpCheckFrequency', k.duration, 'httpCheckFrequency', 'How often --manifest-url is fetched again', { default: '20s' }),
  flagOnly('image-credential-provider-bin-dir', 'imageCredentialProviderBinDir', k.path, 'Directory of image credential plugin binaries'),
  flagOnly('image-credential-provider-config', 'imageCredentialProviderConfig', k.path, 'Image credential plugin configuration file'),
  cfg('image-gc-high-threshold', 'imageGCHighThresholdPercent', k.int32, 'imageGCHighThresholdPercent', 'Disk use percent above which image garbage collection always runs; 0 to 100, 100 disables it', { default: '85' }),
  cfg('image-gc-low-threshold', 'imageGCLowThresholdPercent', k.int32, 'imageGCLowThresholdPercent', 'Disk use percent below which image garbage collection never runs; 0 to 100, not above --image-gc-high-threshold', { default: '80' }),
  cfg('image-service-endpoint', 'imageServiceEndpoint', k.string, 'imageServiceEndpoint', 'Image service endpoint', { defaultText: 'same as --container-runtime-endpoint' }),
  flagOnly('keep-terminated-pod-volumes', 'keepTerminatedPodVolumes', k.bool, 'Keep volumes of terminated pods mounted', { deprecated: 'will be removed in a future version' }),
  cfg('kernel-memcg-notification', 'kernelMemcgNotification', k.bool, 'kernelMemcgNotification', 'Learn of memory thresholds from kernel memcg notifications instead of polling'),
  cfg('orch-api-burst', 'orchAPIBurst', k.int32, 'orchAPIBurst', 'Burst of requests to the API server; 0 selects the default', { default: '100' }),
  cfg('orch-api-content-type', 'contentType', k.string, 'contentType', 'Content type of requests to the API server', { default: 'application/vnd.orch.protobuf' }),
  cfg('orch-api-qps', 'orchAPIQPS', k.int32, 'orchAPIQPS', 'Requests per second to the API server (events and node heartbeats excepted); 0 selects the default', { default: '50' }),
  cfg('orch-reserved', 'orchReserved', k.reservation, 'orchReserved', 'Resources reserved for platform components (cpu=200m,memory=500Mi,ephemeral-storage=1Gi,pid=1000)', { defaultText: 'none' }),
  cfg('orch-reserved-cgroup', 'orchReservedCgroup', k.string, 'orchReservedCgroup', 'Top cgroup of the platform components that --orch-reserved covers'),
  flagOnly('orchconfig', 'orchconfig', k.path, 'Connection file of the API server; present: API server mode, absent: standalone mode'),
  cfg('orchlet-cgroups', 'orchletCgroups', k.string, 'orchletCgroups', 'Cgroup to create and run the orchlet in'),
  cfg('local-storage-capacity-isolation', 'localStorageCapacityIsolation', k.bool, 'localStorageCapacityIsolation', 'Isolate local ephemeral storage', { default: 'true' }),
  flagOnly('lock-file', 'lockFile', k.path, 'Lock file of the orchlet', { stage: 'alpha' }),
  cfg('log-flush-frequency', 'logFlushFrequency', k.duration, 'logging.flushFrequency', 'Longest time between log flushes', { default: '5s', keep: true }),
  cfg('log-json-info-buffer-size', 'logJsonInfoBufferSize', k.byteSize, 'logging.options.json.infoBufferSize', 'Bytes of info messages buffered with split JSON streams (512, 1K, 2Ki, 3M); needs gate LoggingAlphaOptions', { default: '0', stage: 'alpha' }),
  cfg('log-json-split-stream', 'logJsonSplitStream', k.bool, 'logging.options.json.splitStream', 'In JSON format, errors to stderr and info to stdout; needs gate LoggingAlphaOptions', { stage: 'alpha' }),
  cfg('logging-format', 'loggingFormat', k.enumOf(['text', 'json'] as const), 'logging.format', 'Log format: text, or json (gated by LoggingBetaOptions)', { default: 'text' }),
  cfg('make-iptables-util-chains', 'makeIPTablesUtilChains', k.bool, 'makeIPTablesUtilChains', 'Keep the iptables utility chains present on the host', { default: 'true' }),
  cfg('manifest-url', 'staticPodURL', k.string, 'staticPodURL', 'URL of more pod specs to run'),
  cfg('manifest-url-header', 'staticPodURLHeader', k.headers, 'staticPodURLHeader', 'Comma list of name:value headers sent to --manifest-url; repeatable; the same name keeps every value in order'),
  cfg('max-open-files', 'maxOpenFiles', k.int64, 'maxOpenFiles', 'Files the orchlet process may open', { default: '1000000' }),
  cfg('max-pods', 'maxPods', k.int32, 'maxPods', 'Pods this node may run', { default: '110' }),
  flagOnly('maximum-dead-containers', 'maximumDeadContainers', k.int32, 'Old container instances kept on the node; negative disables the cap', { default: '-1', deprecated: 'Use --eviction-hard or --eviction-soft instead. Will be removed in a future version.' }),
  flagOnly('maximum-dead-containers-per-container', 'maximumDeadContainersPerContainer', k.int32, 'Old instances kept per container', { default: '1', deprecated: 'Use --eviction-hard or --eviction-soft instead. Will be removed in a future version.' }),
  cfg('memory-manager-policy', 'memoryManagerPolicy', k.enumOf(['None', 'Static'] as const), 'memoryManagerPolicy', 'Memory manager policy: None or Static', { default: 'None' }),
  flagOnly('minimum-container-ttl-duration', 'minimumContainerTTLDuration', k.duration, 'Least age of a finished container before it is collected', { deprecated: 'Use --eviction-hard or --eviction-soft instead. Will be removed in a future version.' }),
  cfg('minimum-image-ttl-duration', 'imageMinimumGCAge', k.duration, 'imageMinimumGCAge', 'Least age of an unused image before it is collected', { default: '2m0s' }),
  flagOnly('node-ip', 'nodeIP', k.nodeIps, "IP of the node, or a dual-stack pair; '::' prefers the default IPv6 address"),
  flagOnly('node-labels', 'nodeLabels', k.labels, 'Labels added when the node registers (key=value list); labels in the orch.io and k8s.io namespaces must use an allowed prefix or be in the allowed set', { stage: 'alpha' }),
  cfg('node-status-max-images', 'nodeStatusMaxImages', k.int32, 'nodeStatusMaxImages', 'Images reported in the node status; -1 for no cap', { default: '50' }),
  cfg('node-status-update-frequency', 'nodeStatusUpdateFrequency', k.duration, 'nodeStatusUpdateFrequency', "How often the node status is posted; must fit the node controller's grace period", { default: '10s' }),
  cfg('oom-score-adj', 'oomScoreAdj', k.int32, 'oomScoreAdj', 'oom_score_adj of the orchlet process; -1000 to 1000', { default: '-999' }),
  cfg('pod-cidr', 'podCIDR', k.string, 'podCIDR', 'CIDR of pod IPs; standalone mode only (in API server mode the node object carries it)'),
  flagOnly('pod-infra-container-image', 'podInfraContainerImage', k.string, 'Sandbox image; never pruned by image garbage collection', { default: 'registry.k8s.io/pause:3.9', deprecated: 'will be removed in a future release. Image garbage collector will get sandbox image information from CRI.' }),
  cfg('pod-manifest-path', 'staticPodPath', k.path, 'staticPodPath', 'Static pod file, or directory of them (dot files ignored)'),
  cfg('pod-max-pids', 'podPidsLimit', k.int64, 'podPidsLimit', 'Most processes per pod; -1 uses the node allocatable pid capacity', { default: '-1' }),
  cfg('pods-per-core', 'podsPerCore', k.int32, 'podsPerCore', 'Pods per CPU core, capped by --max-pods; 0 disables'),
  cfg('port', 'port', k.port, 'port', 'Port of the orchlet server', { default: '10250' }),
  cfg('protect-kernel-defaults', 'protectKernelDefaults', k.bool, 'protectKernelDefaults', 'Fail when kernel tunables differ from the orchlet defaults'),
  cfg('provider-id', 'providerID', k.string, 'providerID', 'Node identity in a machine database (e.g. a cloud provider)', { keep: true }),
  cfg('qos-reserved', 'qosReserved', k.qosReserved, 'qosReserved', 'Percent of pod requests reserved per QoS level (memory=50%); only memory; needs gate QOSReserved', { stage: 'alpha' }),
  cfg('read-only-port', 'readOnlyPort', k.port, 'readOnlyPort', 'Port of the unauthenticated read-only server; 0 disables it', { default: '10255' }),
  cfg('register-node', 'registerNode', k.bool, 'registerNode', 'Register the node with the API server', { default: 'true' }),
  flagOnly('register-schedulable', 'registerSchedulable', k.bool, 'Register the node as schedulable', { default: 'true', deprecated: 'will be removed in a future version' }),
  cfg('register-with-taints', 'registerWithTaints', k.taints, 'registerWithTaints', 'Taints (key=value:effect list) the node registers with'),
  cfg('registry-burst', 'registryBurst', k.int32, 'registryBurst', 'Burst of image pulls; used only when --registry-qps is above 0', { default: '10' }),
  cfg('registry-qps', 'registryPullQPS', k.int32, 'registryPullQPS', 'Image pulls per second; 0 is unlimited', { default: '5' }),
  cfg('reserved-cpus', 'reservedSystemCPUs', k.cpuList, 'reservedSystemCPUs', 'CPUs or ranges (0-3,8) reserved for system and platform use; supersedes the cpu of the reserved options'),
  cfg('reserved-memory', 'reservedMemory', k.reservedMemory, 'reservedMemory', 'Per-NUMA-node memory reservations (0:memory=1Gi,hugepages-1M=2Gi); repeatable'),
  cfg('resolv-conf', 'resolvConf', k.path, 'resolvConf', 'Resolver file that container DNS configuration starts from', { default: '/etc/resolv.conf' }),
  flagOnly('root-dir', 'rootDir', k.path, 'Directory of orchlet files (volume mounts and so on)', { default: '/var/lib/orchlet' }),
  cfg('rotate-certificates', 'rotateCertificates', k.bool, 'rotateCertificates', 'Renew the client certificate before it expires'),
  cfg('rotate-server-certificates', 'serverTLSBootstrap', k.bool, 'serverTLSBootstrap', 'Request and renew serving certificates from the API server; needs gate RotateOrchletServerCertificate and approval of the requests'),
  cfg('runonce', 'runOnce', k.bool, 'runOnce', 'Exit after starting pods from local files or the manifest URL; exclusive with --enable-server'),
  cfg('runtime-cgroups', 'runtimeCgroups', k.string, 'runtimeCgroups', 'Cgroup of the container runtime'),
  cfg('runtime-request-timeout', 'runtimeRequestTimeout', k.duration, 'runtimeRequestTimeout', 'Timeout of runtime requests except pull, logs, exec and attach', { default: '2m0s' }),
  flagOnly('show-hidden-metrics-for-version', 'showHiddenMetricsForVersion', k.string, 'The previous minor release (e.g. 1.28) whose deprecated, now hidden, metrics /metrics shows again'),
  cfg('seccomp-default', 'seccompDefault', k.bool, 'seccompDefault', 'Use the RuntimeDefault seccomp profile for every workload'),
  cfg('serialize-image-pulls', 'serializeImagePulls', k.bool, 'serializeImagePulls', 'Pull one image at a time', { default: 'true' }),
  cfg('streaming-connection-idle-timeout', 'streamingConnectionIdleTimeout', k.duration, 'streamingConnectionIdleTimeout', 'Idle time after which a streaming connection closes; 0 means none (every connection lasts at most 4 hours)', { default: '4h0m0s' }),
  cfg('sync-frequency', 'syncFrequency', k.duration, 'syncFrequency', 'Longest time between syncs of running containers and config', { default: '1m0s' }),
  cfg('system-cgroups', 'systemCgroups', k.string, 'systemCgroups', 'Cgroup for non-kernel processes not already in one'),
  cfg('system-reserved', 'systemReserved', k.reservation, 'systemReserved', 'Resources reserved for the operating system (cpu=200m,memory=500Mi,ephemeral-storage=1Gi,pid=1000)', { defaultText: 'none' }),
  cfg('system-reserved-cgroup', 'systemReservedCgroup', k.string, 'systemReservedCgroup', 'Top cgroup of the system components that --system-reserved covers'),
  cfg('tls-cert-file', 'tlsCertFile', k.path, 'tlsCertFile', 'Serving certificate (with intermediates); without it and --tls-private-key-file a self-signed pair is made in --cert-dir'),
  cfg('tls-cipher-suites', 'tlsCipherSuites', k.stringList, 'tlsCipherSuites', 'Comma list of TLS cipher suite names for the server', { defaultText: 'Go default suites' }),
  cfg('tls-min-version', 'tlsMinVersion', k.optionalEnum(TLS_VERSIONS), 'tlsMinVersion', 'Lowest TLS version served: VersionTLS10, VersionTLS11, VersionTLS12, VersionTLS13'),
  cfg('tls-private-key-file', 'tlsPrivateKeyFile', k.path, 'tlsPrivateKeyFile', 'Private key of --tls-cert-file'),
  cfg('topology-manager-policy', 'topologyManagerPolicy', k.enumOf(['none', 'best-effort', 'restricted', 'single-numa-node'] as const), 'topologyManagerPolicy', 'Topology manager policy: none, best-effort, restricted, single-numa-node', { default: 'none' }),
  cfg('topology-manager-policy-options', 'topologyManagerPolicyOptions', k.stringMap, 'topologyManagerPolicyOptions', 'key=value options that tune the topology manager policy'),
  cfg('topology-manager-scope', 'topologyManagerScope', k.enumOf(['container', 'pod'] as const), 'topologyManagerScope', 'Scope of topology hints: container or pod', { default: 'container' }),
  cfg('v', 'verbosity', k.int32, 'logging.verbosity', 'Log verbosity level', { short: 'v', keep: true }),
  flagOnly('version', 'version', k.bool, 'Print the version and exit'),
  cfg('vmodule', 'vmodule', k.vmodule, 'logging.vmodule', 'pattern=N list of per-file verbosity; text format only', { keep: true }),
  cfg('volume-plugin-dir', 'volumePluginDir', k.path, 'volumePluginDir', 'Directory of third-party volume plugins', { default: '/usr/libexec/orch/orchlet-plugins/volume/exec/' }),
  cfg('volume-stats-agg-period', 'volumeStatsAggPeriod', k.duration, 'volumeStatsAggPeriod', 'How often volume disk use is computed; negative disables it', { default: '1m0s' })
] as const

type AnyOption = typeof OPTIONS[number]

/** The value of every option, by key. */
export type OptionValues = { -readonly [O in AnyOption as O['key']]: O extends OptionSpec<string, infer T> ? T : never }

export function findOption (name: string): OptionSpec | undefined {
  return OPTIONS.find(o => o.flag === name || o.short === name)
}
