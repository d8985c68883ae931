// The `orch` command: `up`, `apiserver`, `controller-manager`, `scheduler`, `version`, `--help`. Returns an exit code instead of exiting, so tests can call it.

import { hostname } from 'node:os'
import type { Logger } from 'pino'
import { versionInfo } from '../endpoints/version.js'
import { flagHelp, parseDuration, parseFlags, UsageError, type FlagSpec } from './args.js'
import { SECURITY_FLAGS, securityOptions } from './security-flags.js'
import { CSR_SIGNING_FLAGS } from './csr-signing-flags.js'
import { AUDIT_FLAGS, auditOptions } from './audit-flags.js'
import { ADMISSION_FLAGS, parseAdmissionFlags } from './admission-flags.js'
import { AUTHN_CONFIG_FLAGS, authnConfigOptions } from './authn-config-flags.js'
import { LOGGING_FLAGS, levelFromFlags, loggerFromFlags } from './logging-flags.js'
import { loadTracingConfig, type TracingSettings } from '../tracing/config.js'
import { loadEgressSelectorConfig } from '../egress/config.js'
import { ETCD_FLAGS, etcdOptions } from './etcd-flags.js'
import { createFeatureGates, FeatureGateError, parseFeatureGateList, type FeatureGates } from '../featuregate/featuregate.js'

const SERVE_FLAGS: FlagSpec[] = [
  { name: 'data-dir', kind: 'string', help: 'directory of the LMDB store and the kubeconfig', default: './.orch' },
  { name: 'port', kind: 'int', help: 'port to serve on; 0 picks a free port', default: 6443 },
  { name: 'bind-address', kind: 'string', help: 'address to listen on', default: '127.0.0.1' },
  { name: 'cel-workers', kind: 'int', help: 'threads evaluating CRD validation rules (default: the number of cores)' },
  { name: 'request-timeout', kind: 'duration', help: 'time limit of a non-watch request (504 after it); 0 for none', default: '60s' },
  { name: 'min-request-timeout', kind: 'int', help: 'seconds: a watch without timeoutSeconds lasts between this and twice this', default: 1800 },
  { name: 'livez-grace-period', kind: 'duration', help: 'how long after start /livez takes unfinished post-start hooks as done', default: '0s' },
  { name: 'shutdown-delay-duration', kind: 'duration', help: 'on SIGTERM, /readyz fails at once and requests are still served this long before the server drains', default: '0s' },
  { name: 'max-requests-inflight', kind: 'int', help: 'non-mutating requests served at once (more answer 429); 0 for no limit', default: 400 },
  { name: 'max-mutating-requests-inflight', kind: 'int', help: 'mutating requests served at once (more answer 429); 0 for no limit', default: 200 },
  { name: 'max-connections', kind: 'int', help: 'open client connections at once (more are closed)', default: 4096 },
  { name: 'runtime-config', kind: 'string', help: 'comma-separated <group>/<version>[/<resource>][=true|false] and api/all|ga|beta|alpha keys enabling or disabling built-in APIs (e.g. resource.k8s.io/v1alpha2=true)' },
  { name: 'upstream-aliases', kind: 'bool', help: 'serve the *.orch.io groups under their Kubernetes names too (apiextensions.k8s.io, ...)', default: true },
  { name: 'storage-quota-bytes', kind: 'int', help: 'most bytes the store may use (as etcd\'s --quota-backend-bytes); beyond, writes other than deletes answer 507; 0 for no quota beyond the disk', default: 0 },
  { name: 'storage-reserve-bytes', kind: 'int', help: 'bytes kept free on the store\'s file system for deletes, compaction and bookkeeping', default: 1048576 },
  { name: 'feature-gates', kind: 'string', help: 'comma-separated Gate=true|false pairs (e.g. StructuredAuthenticationConfiguration=true)' },
  { name: 'tracing-config-file', kind: 'string', help: 'TracingConfiguration file: export a span per request over OTLP/gRPC (needs the APIServerTracing gate, on by default)' },
  { name: 'egress-selector-config-file', kind: 'string', help: 'EgressSelectorConfiguration file: route outbound connections (cluster: webhooks and orchlets) directly or through an HTTP CONNECT proxy' },
  { name: 'show-hidden-metrics-for-version', kind: 'string', help: 'the previous minor release (e.g. 1.28) to show the metrics it deprecated, hidden since' },
  { name: 'readyz-fail-on-storage-full', kind: 'bool', help: 'fail /readyz while the store is full (default: the storage-space check is informational)', default: false },
  ...ETCD_FLAGS
]

const NODE_FLAGS: FlagSpec[] = [
  { name: 'orchlet', kind: 'bool', help: 'run an orchlet for this machine (up only)', default: true },
  { name: 'node-name', kind: 'string', help: 'name of the local node (default: the hostname)' },
  { name: 'orchlet-port', kind: 'int', help: 'serving port of the local orchlet; 0 picks a free port (default: 10250, or a free one when 10250 is taken or --port is 0)' },
  { name: 'container-runtime-endpoint', kind: 'string', help: 'CRI endpoint of the local orchlet (default unix:///run/containerd/containerd.sock)' },
  { name: 'orchlet-arg', kind: 'list', help: 'a flag passed to the local orchlet, e.g. --orchlet-arg=--max-pods=50' },
  { name: 'orchlet-config', kind: 'string', help: 'OrchletConfiguration file for the local orchlet (replaces the generated one)' },
  { name: 'node-ip', kind: 'string', help: "the local node's InternalIP (default: the orchlet's bind address, 127.0.0.1 for the generated config)" },
  { name: 'controllers', kind: 'string', help: "controllers to run in process: '*' for all, 'foo' to enable, '-foo' to disable (comma-separated; default '*', or Generic.Controllers of --controller-manager-config)" },
  { name: 'controller-manager-config', kind: 'string', help: 'OrchControllerManagerConfiguration file for the in-process controllers (concurrency, periods, controller settings)' },
  { name: 'controller-manager-port', kind: 'int', help: 'plain HTTP port of the in-process controller manager\'s /healthz and /metrics (0: off)', default: 0 },
  { name: 'scheduler-port', kind: 'int', help: 'plain HTTP port of the in-process scheduler\'s /healthz and /metrics (0: off)', default: 0 },
  { name: 'node-monitor-grace-period', kind: 'duration', help: 'how long a node may go without a heartbeat before it is Unknown', default: '40s' }
]

const COMPONENT_FLAGS: FlagSpec[] = [
  { name: 'kubeconfig', kind: 'string', help: 'kubeconfig of the API server to work against' },
  { name: 'config', kind: 'string', help: 'OrchControllerManagerConfiguration file (controller-manager only)' },
  { name: 'leader-migration-config', kind: 'string', help: 'LeaderMigrationConfiguration file (controller-manager only)' },
  { name: 'controllers', kind: 'string', help: "controllers to run: '*' for all, 'foo' to enable, '-foo' to disable (comma-separated)" },
  { name: 'leader-elect', kind: 'bool', help: 'take part in leader election on a Lease before working (default true)' },
  { name: 'root-ca-file', kind: 'string', help: 'PEM CA bundle published as the kube-root-ca.crt ConfigMap in every namespace (controller-manager only)' },
  { name: 'port', kind: 'int', help: 'port of /healthz and /healthz/leaderElection (0: off; default Generic.Port of --config)' },
  { name: 'bind-address', kind: 'string', help: 'address of the health port (default Generic.Address of --config, else 127.0.0.1)' },
  { name: 'show-hidden-metrics-for-version', kind: 'string', help: 'the previous minor release (e.g. 1.28) to show the metrics it deprecated on /metrics of the health port' },
  ...CSR_SIGNING_FLAGS
]

const USAGE = `orch: a small Kubernetes-style control plane

Usage:
  orch up [flags]         start the control plane and an orchlet for this machine, and write DIR/kubeconfig
  orch apiserver [flags]  start the API server alone (same flags)
  orch controller-manager --kubeconfig FILE [--config FILE]   run the controllers against an API server
  orch scheduler --kubeconfig FILE                            run the scheduler against an API server
  orch admin defrag [--data-dir DIR]
                          rewrite the stopped store in DIR/store compacted, returning its free pages to the disk
  orch admin token create [--ttl 24h] [--groups G1,G2]
                          create a bootstrap token (a kube-system Secret) and print it
  orch kubeconfig --user NAME [--group G]... [--expiration 24h] [--output FILE]
                          a kubeconfig for a new user, with a client certificate signed through a CSR
  orch version            print the version
  orch --help             show this help

Flags of up and apiserver:
${flagHelp(SERVE_FLAGS)}

Logging flags of every command:
${flagHelp(LOGGING_FLAGS)}

Security flags of up and apiserver:
${flagHelp(SECURITY_FLAGS)}

Audit flags of up and apiserver:
${flagHelp(AUDIT_FLAGS)}

Flags of up:
${flagHelp(NODE_FLAGS)}

Flags of controller-manager and scheduler:
${flagHelp(COMPONENT_FLAGS)}

orch serves HTTPS only; DIR/kubeconfig holds an administrator's client certificate (system:masters).
Use: kubectl --kubeconfig DIR/kubeconfig get ns
`

/** --tracing-config-file, read and checked (a bad file is one ConfigError line); it needs the APIServerTracing gate. */
function tracingFlag (file: unknown, gates: FeatureGates): TracingSettings | undefined {
  if (typeof file !== 'string') return undefined
  if (!gates.enabled('APIServerTracing')) throw new UsageError('--tracing-config-file requires the APIServerTracing feature gate to be enabled')
  return loadTracingConfig(file)
}

/** --feature-gates of the API server; a bad list is a usage error. */
function featureGatesFlag (value: unknown): FeatureGates {
  try {
    return createFeatureGates(parseFeatureGateList(typeof value === 'string' ? value : ''))
  } catch (err) {
    if (err instanceof FeatureGateError) throw new UsageError(`invalid argument "${String(value)}" for "--feature-gates" flag: ${err.message}`)
    throw err
  }
}

export interface MainIo {
  out(text: string): void
  err(text: string): void
  /** Builds the logger (default: pino JSON lines on stdout, pino-pretty on a TTY). */
  logger?(level: string): Logger
}

const defaultIo: MainIo = {
  out: t => process.stdout.write(t),
  err: t => process.stderr.write(t)
}

/** The component's logger: the injected factory (tests), else the logging flags'. */
function makeLogger (io: MainIo, flags: Record<string, unknown>): Logger {
  const f = flags as Parameters<typeof loggerFromFlags>[0]
  return io.logger === undefined ? loggerFromFlags(f) : io.logger(levelFromFlags(f))
}

/** A duration flag's value in ms (defaults are written as text, given values are parsed already). */
function durationFlag (flags: Record<string, unknown>, name: string): number {
  const v = flags[name]
  return typeof v === 'number' ? v : parseDuration(name, String(v))
}

export async function main (argv: string[], io: MainIo = defaultIo): Promise<number> {
  const [command, ...args] = argv
  try {
    switch (command) {
      case undefined:
      case '--help':
      case '-h':
      case 'help':
        io.out(USAGE)
        return 0
      case 'version':
      case '--version': {
        const v = versionInfo()
        io.out(`orch ${v.gitVersion} (${v.platform}, ${v.goVersion})\n`)
        return 0
      }
      case 'admin': {
        const [sub, ...rest] = args
        if (sub === 'token') return await (await import('./token.js')).tokenCommand(rest, io)
        if (sub !== 'defrag') throw new UsageError(sub === undefined ? 'orch admin needs a command: defrag, token' : `unknown admin command "${sub}"`)
        const { flags, rest: extra } = parseFlags(rest, [SERVE_FLAGS[0]])
        if (extra.length > 0) throw new UsageError(`unexpected argument: ${extra[0]}`)
        const { defrag } = await import('./admin.js') // loads lmdb: on demand, as for up
        return await defrag(flags['data-dir'] as string, io)
      }
      case 'kubeconfig': return await (await import('./user-kubeconfig.js')).userKubeconfigCommand(args, io)
      case 'up':
      case 'apiserver': {
        const serving = [...SERVE_FLAGS, ...LOGGING_FLAGS, ...SECURITY_FLAGS, ...AUTHN_CONFIG_FLAGS, ...ADMISSION_FLAGS, ...AUDIT_FLAGS]
        const specs = command === 'up' ? [...serving, ...NODE_FLAGS] : serving
        const { flags, rest } = parseFlags(args, [...specs, { name: 'help', kind: 'bool', help: 'show help' }])
        if (flags.help === true) { io.out(USAGE); return 0 }
        if (rest.length > 0) throw new UsageError(`unexpected argument: ${rest[0]}`)
        const port = flags.port as number
        if (port > 65535) throw new UsageError(`invalid value "${port}" for --port: must be at most 65535`)
        const security = securityOptions(flags)
        const audit = auditOptions(flags)
        const admission = await parseAdmissionFlags(flags)
        const gates = featureGatesFlag(flags['feature-gates'])
        const structuredAuth = authnConfigOptions(flags, args, gate => gates.enabled(gate))
        const tracing = tracingFlag(flags['tracing-config-file'], gates)
        const logger = makeLogger(io, flags)
        // Loaded on demand: help and version need neither the store nor the registry.
        const { runUntilSignalled } = await import('./up.js')
        const localNode = command === 'up' && flags.orchlet === true
          ? {
              nodeName: ((flags['node-name'] as string | undefined) ?? hostname()).toLowerCase(),
              port: (flags['orchlet-port'] as number | undefined) ?? (port === 0 ? 0 : undefined),
              containerRuntimeEndpoint: flags['container-runtime-endpoint'] as string | undefined,
              extraArgs: flags['orchlet-arg'] as string[] | undefined,
              configFile: flags['orchlet-config'] as string | undefined,
              nodeIP: flags['node-ip'] as string | undefined
            }
          : undefined
        return await runUntilSignalled({
          dataDir: flags['data-dir'] as string,
          port,
          bindAddress: flags['bind-address'] as string,
          logger,
          localNode,
          controllers: command === 'up',
          controllerList: command === 'up' && typeof flags.controllers === 'string' ? flags.controllers.split(',').map(s => s.trim()).filter(s => s !== '') : undefined,
          controllerManagerConfig: command === 'up' && typeof flags['controller-manager-config'] === 'string'
            ? (await import('./cm-config/load.js')).loadControllerManagerConfig(flags['controller-manager-config'], ['OrchControllerManagerConfiguration']).config
            : undefined,
          nodeMonitorGracePeriodMs: command === 'up' ? durationFlag(flags, 'node-monitor-grace-period') : undefined,
          celWorkers: flags['cel-workers'] as number | undefined,
          upstreamAliases: flags['upstream-aliases'] as boolean,
          runtimeConfig: flags['runtime-config'] as string | undefined,
          limits: {
            requestTimeoutMs: durationFlag(flags, 'request-timeout'),
            minRequestTimeoutMs: (flags['min-request-timeout'] as number) * 1000,
            livezGracePeriodMs: durationFlag(flags, 'livez-grace-period'),
            inflight: { readonly: flags['max-requests-inflight'] as number, mutating: flags['max-mutating-requests-inflight'] as number },
            maxConnections: flags['max-connections'] as number
          },
          shutdownDelayMs: durationFlag(flags, 'shutdown-delay-duration'),
          showHiddenMetricsForVersion: flags['show-hidden-metrics-for-version'] as string | undefined,
          componentPorts: command === 'up' ? { controllerManager: flags['controller-manager-port'] as number, scheduler: flags['scheduler-port'] as number } : undefined,
          security,
          structuredAuth,
          audit,
          admission,
          featureGates: gates,
          tracing,
          egress: typeof flags['egress-selector-config-file'] === 'string' ? loadEgressSelectorConfig(flags['egress-selector-config-file']) : undefined,
          storage: {
            quotaBytes: flags['storage-quota-bytes'] as number,
            reserveBytes: flags['storage-reserve-bytes'] as number,
            readyzFailOnFull: flags['readyz-fail-on-storage-full'] as boolean
          },
          etcd: etcdOptions(flags)
        })
      }
      case 'controller-manager':
      case 'scheduler': {
        const { flags, rest } = parseFlags(args, [...COMPONENT_FLAGS, ...LOGGING_FLAGS, { name: 'help', kind: 'bool', help: 'show help' }])
        if (flags.help === true) { io.out(USAGE); return 0 }
        if (rest.length > 0) throw new UsageError(`unexpected argument: ${rest[0]}`)
        if (command === 'scheduler' && (flags.config !== undefined || flags['leader-migration-config'] !== undefined)) {
          throw new UsageError('--config and --leader-migration-config are flags of controller-manager')
        }
        const { runComponent, planComponent } = await import('./components.js')
        const options = {
          component: command,
          kubeconfig: flags.kubeconfig as string | undefined,
          configFile: flags.config as string | undefined,
          leaderMigrationConfig: flags['leader-migration-config'] as string | undefined,
          controllers: typeof flags.controllers === 'string' ? flags.controllers.split(',').map(s => s.trim()).filter(s => s !== '') : undefined,
          leaderElect: flags['leader-elect'] as boolean | undefined,
          port: flags.port as number | undefined,
          rootCAFile: flags['root-ca-file'] as string | undefined,
          bindAddress: flags['bind-address'] as string | undefined,
          showHiddenMetricsForVersion: flags['show-hidden-metrics-for-version'] as string | undefined,
          flags,
          logger: makeLogger(io, flags)
        } as const
        planComponent(options)
        return await runComponent(options)
      }
      default:
        throw new UsageError(`unknown command "${command}"`)
    }
  } catch (err) {
    if (err instanceof Error && err.name === 'ConfigError') {
      io.err(`${err.message}\n`)
      return 1
    }
    if (err instanceof UsageError) {
      io.err(`orch: ${err.message}\nRun 'orch --help' for usage.\n`)
      return 2
    }
    io.err(`orch: ${err instanceof Error ? err.message : String(err)}\n`)
    return 1
  }
}
