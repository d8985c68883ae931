import t from 'tap'
import { CronExpressionParser } from 'cron-parser'
import { failurePolicyAction, formatIndexes, parseIndexes, podBackoffMs } from './job-util.js'
import { scheduleTimes } from './cronjob.js'

t.test('completed indexes read and write as intervals', async t => {
  t.equal(formatIndexes(parseIndexes('0-2,5,7-8')), '0-2,5,7-8')
  t.equal(formatIndexes(new Set([3, 1, 2, 9])), '1-3,9')
  t.equal(formatIndexes(new Set()), '')
})

t.test('pod failure policy: the first matching rule acts', async t => {
  const job = { spec: { podFailurePolicy: { rules: [
    { action: 'Ignore', onPodConditions: [{ type: 'DisruptionTarget' }] },
    { action: 'FailJob', onExitCodes: { containerName: 'main', operator: 'In', values: [42] } }
  ] } } }
  const failed = (code: number, conditions: unknown[] = []): unknown => ({ metadata: { name: 'p', namespace: 'ns' }, status: { conditions, containerStatuses: [{ name: 'main', state: { terminated: { exitCode: code } } }] } })
  t.equal(failurePolicyAction(job, failed(42) as never)?.action, 'FailJob')
  t.match(failurePolicyAction(job, failed(42) as never)?.message, 'Container main for pod ns/p failed with exit code 42 matching FailJob rule at index 1')
  t.equal(failurePolicyAction(job, failed(1) as never), undefined)
  t.equal(failurePolicyAction(job, failed(42, [{ type: 'DisruptionTarget', status: 'True' }]) as never)?.action, 'Ignore')
})

t.test('pod back-off doubles from 10 s up to 6 minutes', async t => {
  t.same([0, 1, 2, 3, 10].map(podBackoffMs), [0, 10_000, 20_000, 40_000, 360_000])
})

t.test('cron schedule times: latest due, missed count, next, in a time zone', async t => {
  const at = (s: string): number => Date.parse(s)
  const r = scheduleTimes(CronExpressionParser, '*/5 * * * *', undefined, at('2026-01-01T00:00:00Z'), at('2026-01-01T00:12:00Z'))
  t.equal(r.latest, at('2026-01-01T00:10:00Z'))
  t.equal(r.missed, 2)
  t.equal(r.next, at('2026-01-01T00:15:00Z'))
  const berlin = scheduleTimes(CronExpressionParser, '0 9 * * *', 'Europe/Berlin', at('2026-01-01T00:00:00Z'), at('2026-01-01T12:00:00Z'))
  t.equal(berlin.latest, at('2026-01-01T08:00:00Z'), '09:00 in Berlin is 08:00 UTC in winter')
  const none = scheduleTimes(CronExpressionParser, '@hourly', undefined, at('2026-01-01T00:00:00Z'), at('2026-01-01T00:30:00Z'))
  t.equal(none.latest, undefined)
  t.equal(none.next, at('2026-01-01T01:00:00Z'))
})
