import t from 'tap'
import { DEFAULT_TRACING_ENDPOINT, tracingSettingsFrom } from './config.js'

const base = { apiVersion: 'apiserver.config.k8s.io/v1beta1', kind: 'TracingConfiguration' }

t.test('defaults: the local collector and no sampling rate', async t => {
  t.same(tracingSettingsFrom(base, 'f'), { endpoint: DEFAULT_TRACING_ENDPOINT })
  t.same(tracingSettingsFrom({ ...base, endpoint: '10.0.0.1:4317', samplingRatePerMillion: 250 }, 'f'), { endpoint: '10.0.0.1:4317', samplingRatePerMillion: 250 })
})

t.test('every bad field is refused with one line naming the file and the field', async t => {
  const bad: Array<[unknown, RegExp]> = [
    [{ ...base, samplingRatePerMillion: 1_000_001 }, /^--tracing-config-file f: samplingRatePerMillion: Invalid value: 1000001/],
    [{ ...base, samplingRatePerMillion: -1 }, /samplingRatePerMillion/],
    [{ ...base, samplingRatePerMillion: 0.5 }, /samplingRatePerMillion/],
    [{ ...base, endpoint: 'http://x:1' }, /endpoint: Invalid value: "http:\/\/x:1": must be host:port/],
    [{ ...base, endpoint: '' }, /endpoint/],
    [{ ...base, kind: 'EgressSelectorConfiguration' }, /kind: Unsupported value/],
    [{ ...base, apiVersion: 'v1' }, /apiVersion: Unsupported value/],
    [{ ...base, sampling: 1 }, /unknown field "sampling"/],
    [[], /must hold a TracingConfiguration object/]
  ]
  for (const [doc, message] of bad) {
    t.throws(() => tracingSettingsFrom(doc, 'f'), { name: 'ConfigError', message }, JSON.stringify(doc))
    try { tracingSettingsFrom(doc, 'f') } catch (err) { t.notOk((err as Error).message.includes('\n'), 'one line') }
  }
})
