// Flag parsing: Go durations as Kubernetes' duration flags take them.
import t from 'tap'
import { parseDuration, parseFlags, UsageError } from './args.js'

t.test('durations parse as Go writes them', async t => {
  t.equal(parseDuration('x', '60s'), 60_000)
  t.equal(parseDuration('x', '1m0s'), 60_000)
  t.equal(parseDuration('x', '1m30s'), 90_000)
  t.equal(parseDuration('x', '500ms'), 500)
  t.equal(parseDuration('x', '1.5h'), 5_400_000)
  t.equal(parseDuration('x', '0'), 0)
  for (const bad of ['', '60', 's', '1m 0s', '-1s', '10x']) t.throws(() => parseDuration('request-timeout', bad), UsageError, bad)
  t.throws(() => parseDuration('request-timeout', 'soon'), { message: 'invalid value "soon" for --request-timeout: want a duration such as 60s or 1m0s' })
})

t.test('a duration flag reads its value', async t => {
  const { flags } = parseFlags(['--request-timeout=2m'], [{ name: 'request-timeout', kind: 'duration', help: '' }])
  t.equal(flags['request-timeout'], 120_000)
})

t.test('a shorthand flag takes one dash: -v 4 and -v=6', async t => {
  const specs = [{ name: 'v', shorthand: 'v', kind: 'int' as const, help: '' }]
  t.equal(parseFlags(['-v', '4'], specs).flags.v, 4)
  t.equal(parseFlags(['-v=6'], specs).flags.v, 6)
  t.equal(parseFlags(['--v=2'], specs).flags.v, 2)
  t.throws(() => parseFlags(['-x'], specs), { message: 'unknown flag: -x' })
})
