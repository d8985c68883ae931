// File-only settings: read from OrchletConfiguration files only, checked, and reported at the file's field.
import t from 'tap'
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ConfigError } from './errors.js'
import { loadOrchletConfig } from './load.js'
import { helpText } from './help.js'
import { configzOf } from '../server/configz.js'

const HEAD = 'apiVersion: orchlet.config.orch.io/v1beta1\nkind: OrchletConfiguration\n'

const dir = await mkdtemp(join(tmpdir(), 'orchlet-fields-'))
t.teardown(() => rm(dir, { recursive: true, force: true }))

async function load (argv: string[]): Promise<Awaited<ReturnType<typeof loadOrchletConfig>>> {
  return await loadOrchletConfig(argv, {}, { logger: { warn: () => {} } })
}

async function fileWith (name: string, body: string): Promise<string> {
  const file = join(dir, name)
  await writeFile(file, HEAD + body)
  return file
}

async function errorOf (argv: string[]): Promise<string> {
  try {
    await load(argv)
  } catch (err) {
    if (err instanceof ConfigError) return err.message
    throw err
  }
  throw new Error('loaded without error')
}

t.test('graceful node shutdown is off unless the file says otherwise', async t => {
  const c = await load([])
  t.equal(c.shutdownGracePeriod, 0)
  t.equal(c.shutdownGracePeriodCriticalPods, 0)
  t.same(c.shutdownGracePeriodByPodPriority, [])
})

t.test('the shutdown periods are read from the file, and drop-ins override them field by field', async t => {
  const base = await fileWith('base.yaml', 'shutdownGracePeriod: 1m\nshutdownGracePeriodCriticalPods: 20s\n')
  const c = await load(['--config', base])
  t.equal(c.shutdownGracePeriod, 60_000)
  t.equal(c.shutdownGracePeriodCriticalPods, 20_000)
  const drop = join(dir, 'drop')
  await mkdir(drop)
  await writeFile(join(drop, '10.conf'), HEAD + 'shutdownGracePeriodCriticalPods: 5s\n')
  const merged = await load(['--config', base, '--config-dir', drop])
  t.equal(merged.shutdownGracePeriod, 60_000, 'kept from the base file')
  t.equal(merged.shutdownGracePeriodCriticalPods, 5_000)
})

t.test('shutdownGracePeriodByPodPriority is a list of priority bands', async t => {
  const file = await fileWith('bands.yaml', 'shutdownGracePeriodByPodPriority:\n  - {priority: 100000, shutdownGracePeriodSeconds: 10}\n  - {priority: 0, shutdownGracePeriodSeconds: 30}\n')
  const c = await load(['--config', file])
  t.same(c.shutdownGracePeriodByPodPriority, [{ priority: 100000, shutdownGracePeriodSeconds: 10 }, { priority: 0, shutdownGracePeriodSeconds: 30 }])
})

t.test('no flag sets a file-only field', async t => {
  t.equal(await errorOf(['--shutdown-grace-period', '30s']), 'unknown flag: --shutdown-grace-period')
})

t.test('bad values stop loading with one line naming the file and the field', async t => {
  const cases: Array<[string, string, string]> = [
    ['type.yaml', 'shutdownGracePeriod: 30\n', 'field shutdownGracePeriod: expected a string, got number 30'],
    ['text.yaml', 'shutdownGracePeriod: soon\n', 'field shutdownGracePeriod: invalid duration "soon"'],
    ['negative.yaml', 'shutdownGracePeriod: -1s\n', 'field shutdownGracePeriod: -1s: must not be negative'],
    ['critical.yaml', 'shutdownGracePeriod: 10s\nshutdownGracePeriodCriticalPods: 20s\n', 'field shutdownGracePeriodCriticalPods: 20s: must not be above shutdownGracePeriod (10s)'],
    ['both.yaml', 'shutdownGracePeriod: 10s\nshutdownGracePeriodByPodPriority: [{priority: 0, shutdownGracePeriodSeconds: 5}]\n', 'field shutdownGracePeriodByPodPriority: 0=5s: cannot be used with shutdownGracePeriod (10s)'],
    ['list.yaml', 'shutdownGracePeriodByPodPriority: {priority: 0}\n', 'field shutdownGracePeriodByPodPriority: expected a list, got an object'],
    ['dup.yaml', 'shutdownGracePeriodByPodPriority: [{priority: 1, shutdownGracePeriodSeconds: 5}, {priority: 1, shutdownGracePeriodSeconds: 6}]\n', 'field shutdownGracePeriodByPodPriority: priority 1 is listed twice'],
    ['key.yaml', 'shutdownGracePeriodByPodPriority: [{priority: 1, gracePeriod: 5}]\n', 'field shutdownGracePeriodByPodPriority: unknown field gracePeriod in an entry'],
    ['secs.yaml', 'shutdownGracePeriodByPodPriority: [{priority: 1, shutdownGracePeriodSeconds: -5}]\n', 'field shutdownGracePeriodByPodPriority: shutdownGracePeriodSeconds must be between 0 and'],
    ['prio.yaml', 'shutdownGracePeriodByPodPriority: [{priority: "high", shutdownGracePeriodSeconds: 5}]\n', 'field shutdownGracePeriodByPodPriority: priority must be an integer, got string "high"']
  ]
  for (const [name, body, rule] of cases) {
    const file = await fileWith(name, body)
    const msg = await errorOf(['--config', file])
    t.ok(msg.startsWith(`invalid config file ${file}: ${rule}`), `${name}: ${msg}`)
    t.notMatch(msg, /\n/)
  }
})

t.test('the feature gates are required, and a gate turned off by flag is reported at the file field that needs it', async t => {
  const file = await fileWith('gated.yaml', 'shutdownGracePeriod: 30s\n')
  t.equal(await errorOf(['--config', file, '--feature-gates', 'GracefulNodeShutdown=false']), `invalid config file ${file}: field shutdownGracePeriod: 30s: needs feature gate GracefulNodeShutdown`)
  const bands = await fileWith('gated-bands.yaml', 'shutdownGracePeriodByPodPriority: [{priority: 0, shutdownGracePeriodSeconds: 5}]\n')
  t.equal(await errorOf(['--config', bands, '--feature-gates', 'GracefulNodeShutdownBasedOnPodPriority=false']), `invalid config file ${bands}: field shutdownGracePeriodByPodPriority: 0=5s: needs feature gate GracefulNodeShutdownBasedOnPodPriority`)
  t.equal((await load(['--config', file])).shutdownGracePeriod, 30_000, 'both gates are on by default (beta)')
})

t.test('imageMaximumGCAge: off by default, gated, not negative, above imageMinimumGCAge (the kubelet\'s rules)', async t => {
  t.equal((await load([])).imageMaximumGCAge, 0)
  const file = await fileWith('maxage.yaml', 'imageMaximumGCAge: 1h\n')
  t.equal(await errorOf(['--config', file]), `invalid config file ${file}: field imageMaximumGCAge: 1h0m0s: needs feature gate ImageMaximumGCAge`)
  t.equal((await load(['--config', file, '--feature-gates', 'ImageMaximumGCAge=true'])).imageMaximumGCAge, 3_600_000)
  const gated = await fileWith('maxage-gated.yaml', 'featureGates: {ImageMaximumGCAge: true}\nimageMaximumGCAge: 2m\n')
  t.equal(await errorOf(['--config', gated]), `invalid config file ${gated}: field imageMaximumGCAge: 2m0s: must be greater than --minimum-image-ttl-duration (2m0s)`)
  t.equal((await load(['--config', gated, '--minimum-image-ttl-duration', '1m'])).imageMaximumGCAge, 120_000)
  const negative = await fileWith('maxage-neg.yaml', 'featureGates: {ImageMaximumGCAge: true}\nimageMaximumGCAge: -1m\n')
  t.match(await errorOf(['--config', negative]), /field imageMaximumGCAge: -1m0s: must not be negative$/)
})

t.test('localStorageCapacityIsolation is on unless the file turns it off', async t => {
  t.equal((await load([])).localStorageCapacityIsolation, true)
  const file = await fileWith('lsci.yaml', 'localStorageCapacityIsolation: false\n')
  t.equal((await load(['--config', file])).localStorageCapacityIsolation, false)
  const z = configzOf(await load(['--config', file])).orchletconfig
  t.equal(z.localStorageCapacityIsolation, false, '/configz shows it')
  t.equal(z.imageMaximumGCAge, '0s')
  const bad = await fileWith('lsci-bad.yaml', 'localStorageCapacityIsolation: "no"\n')
  t.match(await errorOf(['--config', bad]), /field localStorageCapacityIsolation: expected true or false, got string "no"$/)
})

t.test('/configz and --help show the file-only fields', async t => {
  const file = await fileWith('shown.yaml', 'shutdownGracePeriod: 30s\nshutdownGracePeriodCriticalPods: 10s\n')
  const z = configzOf(await load(['--config', file])).orchletconfig
  t.equal(z.shutdownGracePeriod, '30s')
  t.equal(z.shutdownGracePeriodCriticalPods, '10s')
  t.same(z.shutdownGracePeriodByPodPriority, [])
  const help = helpText()
  t.match(help, /Config-file-only fields \(no flag sets them\):\n {6}shutdownGracePeriod duration\n {8}.*\(default 0s\)/)
  t.match(help, / {6}shutdownGracePeriodByPodPriority \[\{priority, shutdownGracePeriodSeconds\}\]\n/)
  t.notMatch(help, /--shutdown/)
})

t.test('the README example of graceful node shutdown loads as a valid configuration', async t => {
  const c = await load(['--config', await fileWith('local.yaml', 'shutdownGracePeriod: 30s\nshutdownGracePeriodCriticalPods: 10s\n')])
  t.equal(c.shutdownGracePeriod, 30_000)
  t.equal(c.shutdownGracePeriodCriticalPods, 10_000)
})

t.test('tracing: the tracing client config, defaulted and checked at its field', async t => {
  const none = await load(['--config', await fileWith('no-tracing.yaml', '')])
  t.equal(none.tracing, null)
  const given = await load(['--config', await fileWith('tracing.yaml', 'tracing: {samplingRatePerMillion: 10}\n')])
  t.same(given.tracing, { endpoint: 'localhost:4317', samplingRatePerMillion: 10 })
  const bad = await errorOf(['--config', await fileWith('bad-tracing.yaml', 'tracing: {samplingRatePerMillion: 2000000}\n')])
  t.match(bad, /tracing/)
  t.match(bad, /samplingRatePerMillion: Invalid value: 2000000/)
  t.notOk(bad.includes('\n'), 'one line')
  t.match(await errorOf(['--config', await fileWith('odd-tracing.yaml', 'tracing: {url: x}\n')]), /unknown field url/)
})
