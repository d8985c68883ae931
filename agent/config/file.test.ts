import t from 'tap'
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ConfigError } from './errors.js'
import { loadOrchletConfig } from './load.js'

const HEAD = 'apiVersion: orchlet.config.orch.io/v1beta1\nkind: OrchletConfiguration\n'

async function tempDir (t: { teardown: (fn: () => unknown) => void }): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'orchlet-config-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  return dir
}

async function load (argv: string[], env: Record<string, string> = {}): Promise<Awaited<ReturnType<typeof loadOrchletConfig>>> {
  return await loadOrchletConfig(argv, env, { logger: { warn: () => {} } })
}

async function errorOf (argv: string[], env: Record<string, string> = {}): Promise<string> {
  try {
    await load(argv, env)
  } catch (err) {
    if (err instanceof ConfigError) return err.message
    throw err
  }
  throw new Error('loaded without error')
}

t.test('reads an OrchletConfiguration in YAML with camelCase fields in their units', async t => {
  const dir = await tempDir(t)
  const file = join(dir, 'orchlet.yaml')
  await writeFile(file, HEAD + `
maxPods: 42
syncFrequency: 30s
containerLogMaxSize: 20Mi
evictionHard:
  memory.available: 200Mi
  nodefs.available: 5%
registerWithTaints:
  - {key: edge, value: "true", effect: NoSchedule}
reservedSystemCPUs: "0-1"
reservedMemory:
  - numaNode: 0
    limits: {memory: 1Gi}
staticPodURLHeader:
  X-Token: [a, b]
staticPodPath: manifests
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true, cacheTTL: 1m}
logging:
  format: json
featureGates: {QOSReserved: true}
qosReserved: {memory: 25%}
`)
  const c = await load(['--config', file])
  t.equal(c.maxPods, 42)
  t.equal(c.syncFrequency, 30_000)
  t.equal(c.containerLogMaxSize, 20 * 2 ** 20)
  t.same(c.evictionHard.map(x => x.signal), ['memory.available', 'nodefs.available'])
  t.same(c.registerWithTaints, [{ key: 'edge', value: 'true', effect: 'NoSchedule' }])
  t.same(c.reservedSystemCPUs, [0, 1])
  t.same(c.reservedMemory, [{ numaNode: 0, limits: { memory: 2 ** 30 } }])
  t.same(c.staticPodURLHeader, { 'X-Token': ['a', 'b'] })
  t.equal(c.staticPodPath, join(dir, 'manifests'), 'relative paths resolve against the file')
  t.equal(c.anonymousAuth, false)
  t.equal(c.authenticationTokenWebhook, true)
  t.equal(c.authenticationTokenWebhookCacheTTL, 60_000)
  t.equal(c.loggingFormat, 'json')
  t.same(c.qosReserved, { memory: 25 })
})

t.test('reads JSON and an injected file reader', async t => {
  const text = JSON.stringify({ apiVersion: 'orchlet.config.orch.io/v1beta1', kind: 'OrchletConfiguration', maxPods: 7, featureGates: { QOSReserved: true }, qosReserved: { memory: '25%' } })
  const c = await loadOrchletConfig(['--config', '/virtual/orchlet.json'], {}, { logger: { warn: () => {} }, readFile: async f => { t.equal(f, '/virtual/orchlet.json'); return text } })
  t.equal(c.maxPods, 7)
  t.same(c.qosReserved, { memory: 25 })
  t.equal(c.featureGates.enabled('QOSReserved'), true)
})

t.test('file < drop-ins in lexical order < flags', async t => {
  const dir = await tempDir(t)
  const drop = join(dir, 'orchlet.conf.d')
  await mkdir(drop)
  await writeFile(join(dir, 'base.yaml'), HEAD + 'maxPods: 50\nport: 1000\nclusterDomain: base.local\n')
  await writeFile(join(drop, '20-b.conf'), HEAD + 'maxPods: 70\n')
  await writeFile(join(drop, '10-a.conf'), HEAD + 'maxPods: 60\nport: 2000\n')
  await writeFile(join(drop, '30-c.yaml'), 'not read: not a .conf file')
  const fromFiles = await load(['--config', join(dir, 'base.yaml'), '--config-dir', drop])
  t.equal(fromFiles.maxPods, 70, 'the last drop-in wins')
  t.equal(fromFiles.port, 2000, 'an earlier drop-in still overrides the base')
  t.equal(fromFiles.clusterDomain, 'base.local', 'fields no drop-in sets keep the base value')
  const withFlag = await load(['--config', join(dir, 'base.yaml'), '--config-dir', drop, '--max-pods', '80'])
  t.equal(withFlag.maxPods, 80)
  t.equal(withFlag.port, 2000)
})

t.test('drop-ins merge maps and structs field by field and replace lists', async t => {
  const dir = await tempDir(t)
  await writeFile(join(dir, 'base.yaml'), HEAD + `
evictionHard: {memory.available: 100Mi}
clusterDNS: [10.0.0.1, 10.0.0.2]
authentication: {webhook: {enabled: true}}
featureGates: {QOSReserved: true, AllBeta: false}
`)
  await writeFile(join(dir, '00.conf'), HEAD + `
evictionHard: {nodefs.available: 5%}
clusterDNS: [10.0.0.3]
authentication: {anonymous: {enabled: false}}
featureGates: {AllBeta: true}
`)
  const c = await load(['--config', join(dir, 'base.yaml'), '--config-dir', dir])
  t.same(c.evictionHard.map(x => x.signal), ['memory.available', 'nodefs.available'])
  t.same(c.clusterDNS, ['10.0.0.3'])
  t.equal(c.authenticationTokenWebhook, true)
  t.equal(c.anonymousAuth, false)
  t.same(c.featureGateValues, { QOSReserved: true, AllBeta: true })
})

t.test('a map flag replaces the file map; feature gate flags merge per gate', async t => {
  const dir = await tempDir(t)
  await writeFile(join(dir, 'c.yaml'), HEAD + 'evictionHard: {memory.available: 100Mi}\nfeatureGates: {QOSReserved: true, AllAlpha: false}\n')
  const c = await load(['--config', join(dir, 'c.yaml'), '--eviction-hard', 'nodefs.available<1%', '--feature-gates', 'AllAlpha=true'])
  t.same(c.evictionHard, [{ signal: 'nodefs.available', operator: 'LessThan', value: { percent: 1 } }])
  t.same(c.featureGateValues, { QOSReserved: true, AllAlpha: true })
  t.equal(c.featureGates.enabled('LoggingAlphaOptions'), true)
})

t.test('the drop-in directory may come from ORCHLET_CONFIG_DROPIN_DIR_ALPHA; --config-dir wins', async t => {
  const a = await tempDir(t)
  const b = await tempDir(t)
  await writeFile(join(a, 'x.conf'), HEAD + 'maxPods: 11\n')
  await writeFile(join(b, 'x.conf'), HEAD + 'maxPods: 22\n')
  t.equal((await load([], { ORCHLET_CONFIG_DROPIN_DIR_ALPHA: a })).maxPods, 11)
  t.equal((await load(['--config-dir', b], { ORCHLET_CONFIG_DROPIN_DIR_ALPHA: a })).maxPods, 22)
})

t.test('bad config files stop loading with one line naming the file and the field', async t => {
  const dir = await tempDir(t)
  const cases: Array<[string, string, string]> = [
    ['unknown.yaml', HEAD + 'maxPod: 3\n', 'field maxPod: unknown field'],
    ['nested.yaml', HEAD + 'authentication:\n  webhook:\n    enable: true\n', 'field authentication.webhook.enable: unknown field'],
    ['flagonly.yaml', HEAD + 'nodeLabels: {a: b}\n', 'field nodeLabels: unknown field'],
    ['kind.yaml', 'apiVersion: orchlet.config.orch.io/v1beta1\nkind: KubeletConfiguration\n', 'field kind: must be OrchletConfiguration, got "KubeletConfiguration"'],
    ['version.yaml', 'apiVersion: kubelet.config.k8s.io/v1beta1\nkind: OrchletConfiguration\n', 'field apiVersion: must be orchlet.config.orch.io/v1beta1, got "kubelet.config.k8s.io/v1beta1"'],
    ['nokind.yaml', 'maxPods: 3\n', 'field kind: must be OrchletConfiguration, got null'],
    ['yaml.yaml', HEAD + 'maxPods: [1\n', 'not valid YAML or JSON:'],
    ['dup.yaml', HEAD + 'maxPods: 1\nmaxPods: 2\n', 'not valid YAML or JSON: Map keys must be unique at line 4, column 1'],
    ['scalar.yaml', '42\n', 'expected an OrchletConfiguration object'],
    ['int.yaml', HEAD + 'maxPods: many\n', 'field maxPods: expected an integer, got string "many"'],
    ['bool.yaml', HEAD + 'failSwapOn: "yes"\n', 'field failSwapOn: expected true or false, got string "yes"'],
    ['duration.yaml', HEAD + 'syncFrequency: 10\n', 'field syncFrequency: expected a string, got number 10'],
    ['durtext.yaml', HEAD + 'syncFrequency: soon\n', 'field syncFrequency: invalid duration "soon"'],
    ['struct.yaml', HEAD + 'authentication: true\n', 'field authentication: expected an object'],
    ['list.yaml', HEAD + 'clusterDNS: 10.0.0.1\n', 'field clusterDNS: expected a list, got string "10.0.0.1"'],
    ['eviction.yaml', HEAD + 'evictionHard: {cpu.available: 1}\n', 'field evictionHard: expected a string for key cpu.available, got number 1'],
    ['signal.yaml', HEAD + 'evictionHard: {cpu.available: "1"}\n', 'field evictionHard: unsupported eviction signal "cpu.available"'],
    ['taint.yaml', HEAD + 'registerWithTaints: [{key: a, effect: Never}]\n', 'field registerWithTaints: taint "a:Never" has effect "Never"'],
    ['gates.yaml', HEAD + 'featureGates: {QOSReserved: "on"}\n', 'field featureGates: expected true or false for QOSReserved, got string "on"'],
    ['enum.yaml', HEAD + 'cgroupDriver: docker\n', 'field cgroupDriver: must be one of cgroupfs, systemd']
  ]
  for (const [name, text, rule] of cases) {
    const file = join(dir, name)
    await writeFile(file, text)
    const msg = await errorOf(['--config', file])
    t.ok(msg.startsWith(`invalid config file ${file}: ${rule}`), `${name}: ${msg}`)
    t.notMatch(msg, /\n|:$/)
  }
})

t.test('unreadable files and directories are one-line errors', async t => {
  const dir = await tempDir(t)
  t.equal(await errorOf(['--config', join(dir, 'missing.yaml')]), `invalid config file ${join(dir, 'missing.yaml')}: cannot read it: ENOENT`)
  t.equal(await errorOf(['--config-dir', join(dir, 'nodir')]), `invalid config file ${join(dir, 'nodir')}: cannot read the drop-in directory: ENOENT`)
  await writeFile(join(dir, 'bad.conf'), HEAD + 'maxPodz: 1\n')
  t.equal(await errorOf(['--config-dir', dir]), `invalid config file ${join(dir, 'bad.conf')}: field maxPodz: unknown field`)
})

t.test('rules apply to values from files too', async t => {
  const dir = await tempDir(t)
  await writeFile(join(dir, 'c.yaml'), HEAD + 'imageGCLowThresholdPercent: 90\nimageGCHighThresholdPercent: 80\n')
  // Reported at the file's field, the value and the rule (the rule may name the other option by its flag).
  t.equal(await errorOf(['--config', join(dir, 'c.yaml')]), `invalid config file ${join(dir, 'c.yaml')}: field imageGCLowThresholdPercent: 90: must not be above --image-gc-high-threshold (80)`)
  t.equal(await errorOf(['--config', join(dir, 'c.yaml'), '--image-gc-low-threshold', '95']), 'invalid value for --image-gc-low-threshold (95): must not be above --image-gc-high-threshold (80)', 'a flag value is reported as the flag')
  await writeFile(join(dir, 'g.yaml'), HEAD + 'featureGates: {NoSuchGate: true}\n')
  t.equal(await errorOf(['--config', join(dir, 'g.yaml')]), 'invalid value for --feature-gates (NoSuchGate=true): unrecognized feature gate: NoSuchGate')
  await writeFile(join(dir, 'v.yaml'), HEAD + 'logging: {format: json, vmodule: [{filePattern: "x", verbosity: 2}]}\n')
  t.equal(await errorOf(['--config', join(dir, 'v.yaml')]), `invalid config file ${join(dir, 'v.yaml')}: field logging.vmodule: x=2: works only with the text format, not --logging-format (json)`)
})
