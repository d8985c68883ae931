import t from 'tap'
import { ConfigError } from './errors.js'
import { loadOrchletConfig } from './load.js'

async function load (argv: string[]): Promise<{ warnings: string[], config: Awaited<ReturnType<typeof loadOrchletConfig>> }> {
  const warnings: string[] = []
  const config = await loadOrchletConfig(argv, {}, { logger: { warn: m => warnings.push(m) } })
  return { warnings, config }
}

async function errorOf (argv: string[]): Promise<ConfigError> {
  try {
    await load(argv)
  } catch (err) {
    if (err instanceof ConfigError) return err
    throw err
  }
  throw new Error(`no error for ${argv.join(' ')}`)
}

/** [argv, exact one-line error] for every rule and every value parser reached from the command line. */
const BAD: Array<[string[], string]> = [
  // rules
  [['--image-gc-low-threshold', '90', '--image-gc-high-threshold', '80'], 'invalid value for --image-gc-low-threshold (90): must not be above --image-gc-high-threshold (80)'],
  [['--image-gc-high-threshold', '101'], 'invalid value for --image-gc-high-threshold (101): must be between 0 and 100'],
  [['--image-gc-low-threshold', '-1'], 'invalid value for --image-gc-low-threshold (-1): must be between 0 and 100'],
  [['--runonce'], 'invalid value for --runonce (true): cannot be used with --enable-server (true)'],
  [['--show-hidden-metrics-for-version', '1.27'], 'invalid value for --show-hidden-metrics-for-version (1.27): must be omitted or the previous minor version, 1.28'],
  [['--bootstrap-orchconfig', '/etc/orch/bootstrap.conf'], 'invalid value for --bootstrap-orchconfig (/etc/orch/bootstrap.conf): needs --orchconfig, the path the connection file is written to'],
  [['--enforce-node-allocatable', 'none,pods'], 'invalid value for --enforce-node-allocatable (none,pods): none must stand alone'],
  [['--enforce-node-allocatable', 'pods,everything'], 'invalid value for --enforce-node-allocatable (pods,everything): unknown level "everything"; must be none, pods, system-reserved, orch-reserved'],
  [['--enforce-node-allocatable', 'pods,pods'], 'invalid value for --enforce-node-allocatable (pods,pods): lists a level twice'],
  [['--enforce-node-allocatable', 'pods,system-reserved'], 'invalid value for --enforce-node-allocatable (pods,system-reserved): system-reserved needs --system-reserved-cgroup'],
  [['--enforce-node-allocatable', 'orch-reserved'], 'invalid value for --enforce-node-allocatable (orch-reserved): orch-reserved needs --orch-reserved-cgroup'],
  [['--cgroups-per-qos=false'], 'invalid value for --enforce-node-allocatable (pods): pods needs --cgroups-per-qos (false) to be true'],
  [['--reserved-cpus', '0-1', '--system-reserved-cgroup', '/system', '--enforce-node-allocatable', 'none'], 'invalid value for --reserved-cpus (0-1): cannot be used with --system-reserved-cgroup or --orch-reserved-cgroup'],
  [['--container-log-max-files', '1'], 'invalid value for --container-log-max-files (1): must be at least 2'],
  [['--container-log-max-size', '0'], 'invalid value for --container-log-max-size (0): must be above 0'],
  [['--oom-score-adj', '-1001'], 'invalid value for --oom-score-adj (-1001): must be between -1000 and 1000'],
  [['--port', '70000'], 'invalid value for --port (70000): must be between 0 and 65535'],
  [['--read-only-port', '-1'], 'invalid value for --read-only-port (-1): must be between 0 and 65535'],
  [['--healthz-port', '65536'], 'invalid value for --healthz-port (65536): must be between 0 and 65535'],
  [['--event-qps', '-1'], 'invalid value for --event-qps (-1): must be at least 0'],
  [['--event-burst', '-1'], 'invalid value for --event-burst (-1): must be at least 0'],
  [['--orch-api-qps', '-5'], 'invalid value for --orch-api-qps (-5): must be at least 0'],
  [['--orch-api-burst', '-5'], 'invalid value for --orch-api-burst (-5): must be at least 0'],
  [['--registry-qps', '-1'], 'invalid value for --registry-qps (-1): must be at least 0'],
  [['--max-pods', '0'], 'invalid value for --max-pods (0): must be above 0'],
  [['--node-status-max-images', '-2'], 'invalid value for --node-status-max-images (-2): must be at least -1'],
  [['--node-status-update-frequency', '0s'], 'invalid value for --node-status-update-frequency (0s): must be above 0'],
  [['--sync-frequency', '-1s'], 'invalid value for --sync-frequency (-1s): must be above 0'],
  [['--eviction-pressure-transition-period', '-1m'], 'invalid value for --eviction-pressure-transition-period (-1m0s): must not be negative'],
  [['--cpu-cfs-quota-period', '50ms'], 'invalid value for --cpu-cfs-quota-period (50ms): needs feature gate CustomCPUCFSQuotaPeriod to differ from 100ms'],
  [['--cpu-cfs-quota-period', '2s', '--feature-gates', 'CustomCPUCFSQuotaPeriod=true'], 'invalid value for --cpu-cfs-quota-period (2s): must be between 1ms and 1s'],
  [['--logging-format', 'json', '--feature-gates', 'LoggingBetaOptions=false'], 'invalid value for --logging-format (json): needs feature gate LoggingBetaOptions'],
  [['--qos-reserved', 'memory=50%'], 'invalid value for --qos-reserved (memory=50%): needs feature gate QOSReserved'],
  [['--qos-reserved', 'memory=50%', '--feature-gates', 'QOSReserved=true', '--cgroups-per-qos=false', '--enforce-node-allocatable', 'none'], 'invalid value for --qos-reserved (memory=50%): needs --cgroups-per-qos (false) to be true'],
  [['--log-json-info-buffer-size', '1K'], 'invalid value for --log-json-info-buffer-size (1000): needs feature gate LoggingAlphaOptions'],
  [['--log-json-split-stream'], 'invalid value for --log-json-split-stream (true): needs feature gate LoggingAlphaOptions'],
  [['--rotate-server-certificates', '--feature-gates', 'RotateOrchletServerCertificate=false'], 'invalid value for --rotate-server-certificates (true): needs feature gate RotateOrchletServerCertificate'],
  [['--vmodule', 'x=2', '--logging-format', 'json'], 'invalid value for --vmodule (x=2): works only with the text format, not --logging-format (json)'],
  [['--cluster-dns', '10.0.0.10,dns.local'], 'invalid value for --cluster-dns (10.0.0.10,dns.local): "dns.local" is not a valid IP address'],
  [['--tls-cipher-suites', 'TLS_AES_128_GCM_SHA256,TLS_FAKE'], 'invalid value for --tls-cipher-suites (TLS_AES_128_GCM_SHA256,TLS_FAKE): unknown cipher suite "TLS_FAKE"'],
  [['--tls-cert-file', '/c.pem'], 'invalid value for --tls-cert-file (/c.pem): must be set together with the other of --tls-cert-file and --tls-private-key-file'],
  [['--manifest-url', 'ftp://x/pods'], 'invalid value for --manifest-url (ftp://x/pods): must be an http or https URL'],
  [['--pod-cidr', '10.0.0.0/33'], 'invalid value for --pod-cidr (10.0.0.0/33): must be a CIDR like 10.244.0.0/24'],
  [['--node-labels', 'orch.io/role=edge'], 'invalid value for --node-labels (orch.io/role=edge): labels in the orch.io and k8s.io namespaces must begin with an allowed prefix'],
  [['--node-labels', 'example.k8s.io/x=y'], 'invalid value for --node-labels (example.k8s.io/x=y): labels in the orch.io and k8s.io namespaces'],
  [['--node-labels', 'bad key=x'], 'invalid value for --node-labels (bad key=x): key "bad key" is invalid'],
  [['--eviction-soft', 'memory.available<1Gi'], 'invalid value for --eviction-soft (memory.available<1Gi): no grace period in --eviction-soft-grace-period for memory.available'],
  [['--eviction-soft-grace-period', 'memory.available=1m'], 'invalid value for --eviction-soft-grace-period (memory.available=1m0s): grace period for memory.available, which has no --eviction-soft threshold'],
  [['--v', '-1'], 'invalid value for --v (-1): must be at least 0'],
  // value parsers
  [['--max-pods', 'many'], 'invalid value for --max-pods (many): must be an integer'],
  [['--anonymous-auth=maybe'], 'invalid value for --anonymous-auth (maybe): must be true or false'],
  [['--sync-frequency', '10'], 'invalid value for --sync-frequency (10): missing unit in duration "10" (use ns, us, ms, s, m or h)'],
  [['--container-log-max-size', '10MB'], 'invalid value for --container-log-max-size (10MB): "10MB" is not a quantity (forms like 128974848, 129e6, 129M, 123Mi, 500m)'],
  [['--address', '300.1.1.1'], 'invalid value for --address (300.1.1.1): "300.1.1.1" is not a valid IP address'],
  [['--node-ip', '10.0.0.1,10.0.0.2'], 'invalid value for --node-ip (10.0.0.1,10.0.0.2): a dual-stack pair needs one IPv4 and one IPv6 address'],
  [['--cgroup-driver', 'docker'], 'invalid value for --cgroup-driver (docker): must be one of cgroupfs, systemd'],
  [['--cpu-manager-policy', 'dynamic'], 'invalid value for --cpu-manager-policy (dynamic): must be one of none, static'],
  [['--memory-manager-policy', 'static'], 'invalid value for --memory-manager-policy (static): must be one of None, Static'],
  [['--topology-manager-policy', 'all'], 'invalid value for --topology-manager-policy (all): must be one of none, best-effort, restricted, single-numa-node'],
  [['--topology-manager-scope', 'node'], 'invalid value for --topology-manager-scope (node): must be one of container, pod'],
  [['--tls-min-version', 'VersionTLS14'], 'invalid value for --tls-min-version (VersionTLS14): must be one of VersionTLS10, VersionTLS11, VersionTLS12, VersionTLS13'],
  [['--hairpin-mode', 'on'], 'invalid value for --hairpin-mode (on): must be one of promiscuous-bridge, hairpin-veth, none'],
  [['--authorization-mode', 'RBAC'], 'invalid value for --authorization-mode (RBAC): must be one of AlwaysAllow, Webhook'],
  [['--logging-format', 'xml'], 'invalid value for --logging-format (xml): must be one of text, json'],
  [['--eviction-hard', 'memory.available>1Gi'], 'invalid value for --eviction-hard (memory.available>1Gi): malformed threshold "memory.available>1Gi", expect signal<value (only < is allowed)'],
  [['--eviction-hard', 'cpu.available<1'], 'invalid value for --eviction-hard (cpu.available<1): unsupported eviction signal "cpu.available" (known: memory.available, allocatableMemory.available, nodefs.available, nodefs.inodesFree, imagefs.available, imagefs.inodesFree, pid.available)'],
  [['--eviction-hard', 'nodefs.available<110%'], 'invalid value for --eviction-hard (nodefs.available<110%): percentage 110% must be between 0% and 100%'],
  [['--eviction-minimum-reclaim', 'imagefs.available=lots'], 'invalid value for --eviction-minimum-reclaim (imagefs.available=lots): "lots" is not a quantity (forms like 128974848, 129e6, 129M, 123Mi, 500m)'],
  [['--register-with-taints', 'a=b:Sometimes'], 'invalid value for --register-with-taints (a=b:Sometimes): taint "a=b:Sometimes" has effect "Sometimes"; must be NoSchedule, PreferNoSchedule or NoExecute'],
  [['--system-reserved', 'gpu=1'], 'invalid value for --system-reserved (gpu=1): cannot reserve "gpu" (only cpu, memory, ephemeral-storage, pid)'],
  [['--orch-reserved', 'memory'], 'invalid value for --orch-reserved (memory): malformed pair "memory", expect key=value'],
  [['--reserved-cpus', '4-2'], 'invalid value for --reserved-cpus (4-2): range "4-2" ends before it starts'],
  [['--reserved-memory', '0:disk=1Gi'], 'invalid value for --reserved-memory (0:disk=1Gi): unknown memory type "disk" (memory or hugepages-<size>)'],
  [['--manifest-url-header', 'Authorization'], 'invalid value for --manifest-url-header (Authorization): malformed pair "Authorization", expect name:value'],
  [['--feature-gates', 'QOSReserved=maybe'], 'invalid value for --feature-gates (QOSReserved=maybe): value of QOSReserved must be true or false, got "maybe"'],
  [['--feature-gates', 'NoSuchGate=true'], 'invalid value for --feature-gates (NoSuchGate=true): unrecognized feature gate: NoSuchGate'],
  [['--vmodule', 'x=high'], 'invalid value for --vmodule (x=high): must be an integer'],
  // syntax
  [['--no-such-flag'], 'unknown flag: --no-such-flag'],
  [['--max-pods'], 'flag needs an argument: --max-pods'],
  [['pods.yaml'], 'unexpected argument "pods.yaml": orchlet takes only flags'],
  [['-x'], 'unknown flag: -x']
]

t.test('every bad value stops loading with one line naming the option and the rule', async t => {
  for (const [argv, line] of BAD) {
    const err = await errorOf(argv)
    t.ok(err.message.startsWith(line), `${argv.join(' ')}\n   got: ${err.message}`)
    t.notMatch(err.message, /\n/, 'one line')
  }
})

t.test('error codes tell syntax, value and gate errors apart', async t => {
  t.equal((await errorOf(['--nope'])).code, 'ORCHLET_CONFIG_UNKNOWN_FLAG')
  t.equal((await errorOf(['--max-pods'])).code, 'ORCHLET_CONFIG_FLAG_SYNTAX')
  t.equal((await errorOf(['--max-pods', 'x'])).code, 'ORCHLET_CONFIG_INVALID_VALUE')
  t.equal((await errorOf(['--feature-gates', 'Nope=true'])).code, 'ORCHLET_CONFIG_FEATURE_GATE')
})

t.test('good values load in their units', async t => {
  const { config: c } = await load([
    '--max-pods=20', '--sync-frequency', '30s', '--container-log-max-size', '1.5Mi', '--eviction-hard', 'memory.available<1Gi',
    '--eviction-soft', 'memory.available<2Gi', '--eviction-soft-grace-period', 'memory.available=1m30s',
    '--register-with-taints', 'a=b:NoSchedule', '--register-with-taints', 'c:NoExecute', '--reserved-cpus', '0-1,4', '--reserved-cpus', '0-1,4',
    '--reserved-memory', '0:memory=1Gi', '--reserved-memory', '1:hugepages-2Mi=4Mi', '--system-reserved', 'cpu=500m,memory=1Gi',
    '--manifest-url', 'http://x/p', '--manifest-url-header', 'a:hello,b:again,c:world', '--manifest-url-header', 'b:beautiful',
    '--node-ip', '10.0.0.1,fd00::1', '--node-labels', 'orch.io/hostname=n1,node.orch.io/pool=a,topology.orch.io/zone=z,example.com/x=y',
    '-v', '3', '--runonce', '--enable-server=false', '--cluster-dns', '10.0.0.10', '--cluster-dns', 'fd00::10',
    '--enforce-node-allocatable', 'pods,orch-reserved', '--orch-reserved-cgroup', '/orch', '--reserved-cpus', '', '--vmodule', 'pod*=4',
    '--tls-min-version', 'VersionTLS13', '--max_open_files', '50'
  ])
  t.equal(c.maxPods, 20)
  t.equal(c.syncFrequency, 30_000)
  t.equal(c.containerLogMaxSize, 1.5 * 2 ** 20)
  t.same(c.evictionHard, [{ signal: 'memory.available', operator: 'LessThan', value: { quantity: 2 ** 30 } }])
  t.same(c.evictionSoftGracePeriod, { 'memory.available': 90_000 })
  t.same(c.registerWithTaints, [{ key: 'a', value: 'b', effect: 'NoSchedule' }, { key: 'c', value: '', effect: 'NoExecute' }])
  t.same(c.reservedSystemCPUs, [], 'the last --reserved-cpus wins')
  t.same(c.enforceNodeAllocatable, ['pods', 'orch-reserved'])
  t.same(c.reservedMemory, [{ numaNode: 0, limits: { memory: 2 ** 30 } }, { numaNode: 1, limits: { 'hugepages-2Mi': 4 * 2 ** 20 } }])
  t.same(c.systemReserved, { cpu: 500, memory: 2 ** 30 })
  t.same(c.staticPodURLHeader, { a: ['hello'], b: ['again', 'beautiful'], c: ['world'] })
  t.same(c.nodeIP, ['10.0.0.1', 'fd00::1'])
  t.equal(c.nodeLabels['node.orch.io/pool'], 'a')
  t.equal(c.verbosity, 3)
  t.equal(c.runOnce, true)
  t.same(c.clusterDNS, ['10.0.0.10', 'fd00::10'], 'list flags append when repeated')
  t.same(c.vmodule, { 'pod*': 4 })
  t.equal(c.tlsMinVersion, 'VersionTLS13')
  t.equal(c.maxOpenFiles, 50, 'underscores read as dashes')
})

t.test('the last of a repeated scalar flag wins', async t => {
  const { config } = await load(['--max-pods', '5', '--max-pods', '7'])
  t.equal(config.maxPods, 7)
})

t.test('deprecated flags work and log a deprecation warning once', async t => {
  const { config, warnings } = await load(['--maximum-dead-containers', '3', '--max-pods', '9', '--max-pods', '10', '--v', '2'])
  t.equal(config.maximumDeadContainers, 3)
  t.equal(config.maxPods, 10)
  t.same(warnings, [
    'Flag --maximum-dead-containers has been deprecated, Use --eviction-hard or --eviction-soft instead. Will be removed in a future version.',
    "Flag --max-pods has been deprecated, This parameter should be set via the config file specified by the orchlet's --config flag."
  ])
})

t.test('soft rules warn instead of failing', async t => {
  const a = await load(['--pod-cidr', '10.244.0.0/24', '--orchconfig', '/etc/orch/orchlet.conf'])
  t.ok(a.warnings.includes('--pod-cidr is used only in standalone mode; ignored because --orchconfig is set'))
  t.equal(a.config.standalone, false)
  const b = await load(['--registry-qps', '0', '--registry-burst', '20'])
  t.ok(b.warnings.includes('--registry-burst is used only when --registry-qps is above 0; ignored'))
  const c = await load(['--pod-cidr', '10.244.0.0/24'])
  t.notOk(c.warnings.some(w => w.startsWith('--pod-cidr')), 'standalone: no warning')
})

t.test('feature gates from flags: AllAlpha, AllBeta and explicit overrides', async t => {
  const { config } = await load(['--feature-gates', 'AllAlpha=true,ContainerCheckpoint=false', '--feature-gates', 'AllBeta=false', '--qos-reserved', 'memory=50%'])
  t.equal(config.featureGates.enabled('QOSReserved'), true)
  t.equal(config.featureGates.enabled('ContainerCheckpoint'), false)
  t.equal(config.featureGates.enabled('SidecarContainers'), false)
  t.same(config.qosReserved, { memory: 50 })
  t.same(config.featureGateValues, { AllAlpha: true, ContainerCheckpoint: false, AllBeta: false })
})

t.test('a bool flag followed by a separate value gets a hint', async t => {
  t.equal((await errorOf(['--enable-server', 'false'])).message, 'unexpected argument "false": orchlet takes only flags (write bool flags as --enable-server=false)')
})
