import t from 'tap'
import { defaultWatchTimeoutMs } from './watch.js'

t.test('a watch without timeoutSeconds lasts between --min-request-timeout and twice that', async t => {
  t.equal(defaultWatchTimeoutMs(() => 0), 1_800_000, 'kube-apiserver default: 30 minutes')
  t.equal(defaultWatchTimeoutMs(() => 0.5), 2_700_000)
  t.equal(defaultWatchTimeoutMs(() => 0, 60_000), 60_000)
  t.equal(defaultWatchTimeoutMs(() => 0.999, 60_000), 119_940)
})
