import t from 'tap'
import { CriLogWriter, parseCriLog, rfc3339Nano } from './cri-log.js'

t.test('formats RFC 3339 timestamps with nanoseconds in UTC', async t => {
  t.equal(rfc3339Nano(1_700_000_000_123_456_789n), '2023-11-14T22:13:20.123456789Z')
  t.equal(rfc3339Nano(1_700_000_000_000_000_001n), '2023-11-14T22:13:20.000000001Z')
})

t.test('writes complete lines as F, splits long lines as P and flushes a trailing partial line', async t => {
  let out = ''
  let ns = 1_700_000_000_000_000_000n
  const w = new CriLogWriter(b => { out += b.toString() }, () => ns++, 8)
  w.write('stdout', Buffer.from('one\ntw'))
  w.write('stderr', Buffer.from('err\n'))
  w.write('stdout', Buffer.from('o\n0123456789'))
  w.write('stdout', Buffer.from('\nlast'))
  w.flush()
  t.same(parseCriLog(out).map(e => [e.stream, e.tag, e.content]), [
    ['stdout', 'F', 'one'], ['stderr', 'F', 'err'], ['stdout', 'F', 'two'], ['stdout', 'P', '0123456789'], ['stdout', 'F', ''], ['stdout', 'F', 'last']
  ])
  t.match(out.split('\n')[0], /^2023-11-14T22:13:20\.000000000Z stdout F one$/)
})
