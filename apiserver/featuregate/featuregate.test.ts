import t from 'tap'
import { createFeatureGates, FeatureGateError, parseFeatureGateList, type FeatureTable } from './featuregate.js'
import { DEFAULT_FEATURE_GATES } from './gates.js'

t.test('the table holds the gates of spec §6 with their stage and default', async t => {
  const cases: Array<[string, string, boolean]> = [
    ['LoggingBetaOptions', 'BETA', true], ['RotateOrchletServerCertificate', 'BETA', true], ['NodeSwap', 'BETA', false],
    ['WindowsHostNetwork', 'ALPHA', true], ['QOSReserved', 'ALPHA', false], ['LoggingAlphaOptions', 'ALPHA', false],
    ['AllAlpha', 'ALPHA', false], ['AllBeta', 'BETA', false], ['WinDSR', 'ALPHA', false], ['WinOverlay', 'BETA', true],
    // Departures from the 1.29 defaults, so kubectl 1.30+ streams over WebSocket: see gates.ts.
    ['TranslateStreamCloseWebsocketRequests', 'ALPHA', true], ['PortForwardWebsockets', 'ALPHA', true]
  ]
  for (const [name, stage, def] of cases) t.same(DEFAULT_FEATURE_GATES[name], { stage, default: def }, name)
  t.equal(Object.keys(DEFAULT_FEATURE_GATES).length, 126)
})

t.test('unset gates take their default', async t => {
  const g = createFeatureGates()
  t.equal(g.enabled('LoggingBetaOptions'), true)
  t.equal(g.enabled('QOSReserved'), false)
  t.equal(g.enabled('WindowsHostNetwork'), true)
  t.throws(() => g.enabled('NoSuchGate'), { code: 'FEATURE_GATE_UNKNOWN' })
})

t.test('explicit values override defaults', async t => {
  const g = createFeatureGates(parseFeatureGateList('QOSReserved=true,LoggingBetaOptions=false'))
  t.equal(g.enabled('QOSReserved'), true)
  t.equal(g.enabled('LoggingBetaOptions'), false)
  t.same(g.explicit(), { QOSReserved: true, LoggingBetaOptions: false })
})

t.test('AllAlpha switches every alpha gate not given explicitly, and no beta gate', async t => {
  const g = createFeatureGates({ AllAlpha: true, ContainerCheckpoint: false })
  t.equal(g.enabled('QOSReserved'), true)
  t.equal(g.enabled('LoggingAlphaOptions'), true)
  t.equal(g.enabled('ContainerCheckpoint'), false, 'explicit value wins whatever the order')
  t.equal(g.enabled('NodeSwap'), false, 'beta gates untouched')
  const off = createFeatureGates({ AllAlpha: false })
  t.equal(off.enabled('WindowsHostNetwork'), false, 'AllAlpha=false turns off an alpha gate that defaults on')
})

t.test('AllBeta switches every beta gate not given explicitly', async t => {
  const g = createFeatureGates({ LoggingBetaOptions: true, AllBeta: false })
  t.equal(g.enabled('LoggingBetaOptions'), true)
  t.equal(g.enabled('SidecarContainers'), false)
  t.equal(g.enabled('QOSReserved'), false, 'alpha gates untouched')
  t.equal(createFeatureGates({ AllBeta: true }).enabled('NodeSwap'), true)
})

t.test('rejects unknown gates and values that are not bools', async t => {
  t.throws(() => createFeatureGates({ NoSuchGate: true }), new FeatureGateError('FEATURE_GATE_UNKNOWN', 'NoSuchGate=true', 'unrecognized feature gate: NoSuchGate'))
  t.throws(() => parseFeatureGateList('QOSReserved=maybe'), { code: 'FEATURE_GATE_INVALID_VALUE', message: 'invalid value of QOSReserved=maybe: must be true or false' })
  t.throws(() => parseFeatureGateList('QOSReserved'), { message: 'missing bool value for QOSReserved' })
  t.same(parseFeatureGateList(' A=1 ,, B=F '), { A: true, B: false })
})

t.test('locked gates may only be set to their default; GA and deprecated gates warn', async t => {
  const table: FeatureTable = {
    Done: { stage: 'GA', default: true, lockToDefault: true },
    Open: { stage: 'GA', default: true },
    Old: { stage: 'DEPRECATED', default: false }
  }
  t.throws(() => createFeatureGates({ Done: false }, { table }), { code: 'FEATURE_GATE_LOCKED', message: 'cannot set feature gate Done to false, feature is locked to true' })
  const warnings: string[] = []
  const g = createFeatureGates({ Done: true, Old: true }, { table, warn: m => warnings.push(m) })
  t.equal(g.enabled('Old'), true)
  t.same(warnings, [
    'Setting GA feature gate Done=true. It will be removed in a future release.',
    'Setting deprecated feature gate Old=true. It will be removed in a future release.'
  ])
  t.equal(g.enabled('Open'), true)
})

t.test('describe lists every gate for help', async t => {
  const lines = createFeatureGates().describe()
  t.equal(lines.length, 126)
  t.ok(lines.includes('QOSReserved=true|false (ALPHA - default=false)'))
})
