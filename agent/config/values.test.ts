import t from 'tap'
import { formatDuration, parseDuration } from './duration.js'
import { formatBytes, parseByteSize, parseBytes, parseQuantity, toMillis } from './quantity.js'
import * as v from './values.js'
import * as r from './resources.js'

t.test('parses Kubernetes durations to milliseconds', async t => {
  const cases: Array<[string, number]> = [
    ['2m0s', 120_000], ['1h30m', 5_400_000], ['100ms', 100], ['-1s', -1000], ['0', 0], ['1.5s', 1500],
    ['4h0m0s', 14_400_000], ['10us', 0.01], ['300ns', 0.0003], ['+5s', 5000], ['.5m', 30_000]
  ]
  for (const [text, ms] of cases) t.equal(parseDuration(text), ms, text)
})

t.test('rejects malformed durations with the reason', async t => {
  const cases: Array<[string, RegExp]> = [
    ['10', /missing unit/], ['', /empty duration/], ['1d', /invalid duration "1d"/], ['abc', /invalid duration/],
    ['-', /invalid duration/], ['1s2', /missing unit in duration "1s2"/], ['s', /invalid duration/]
  ]
  for (const [text, err] of cases) t.throws(() => parseDuration(text), err, JSON.stringify(text))
})

t.test('formats durations as Go does', async t => {
  const cases: Array<[number, string]> = [
    [0, '0s'], [100, '100ms'], [1500, '1.5s'], [120_000, '2m0s'], [14_400_000, '4h0m0s'], [5_400_000, '1h30m0s'],
    [-1000, '-1s'], [30_000, '30s'], [0.01, '10µs'], [0.0003, '300ns'], [3_723_500, '1h2m3.5s']
  ]
  for (const [ms, text] of cases) t.equal(formatDuration(ms), text, text)
})

t.test('parses quantities in binary and decimal SI', async t => {
  const cases: Array<[string, number]> = [
    ['100Mi', 100 * 2 ** 20], ['1.5Gi', 1.5 * 2 ** 30], ['500m', 0.5], ['1e3', 1000], ['2k', 2000], ['3M', 3e6],
    ['1Ki', 1024], ['10', 10], ['0', 0], ['1E2', 100], ['.5Ki', 512], ['-1', -1]
  ]
  for (const [text, n] of cases) t.equal(parseQuantity(text), n, text)
  t.equal(parseBytes('500m'), 1, 'bytes round up')
  t.equal(toMillis(parseQuantity('250m')), 250)
  t.equal(toMillis(parseQuantity('2')), 2000)
  t.equal(parseByteSize('1K'), 1000)
  t.equal(parseByteSize('2Ki'), 2048)
})

t.test('rejects bad quantities', async t => {
  for (const text of ['10MB', 'abc', '', '1.2.3', 'Mi', '10 Mi', '1K']) t.throws(() => parseQuantity(text), /is not a quantity/, text)
  t.throws(() => parseBytes('-1Mi'), /must not be negative/)
})

t.test('parses scalar values', async t => {
  t.equal(v.parseBool('True'), true)
  t.equal(v.parseBool('0'), false)
  t.throws(() => v.parseBool('yes'), /must be true or false/)
  t.equal(v.parseInteger('-5'), -5)
  t.throws(() => v.parseInteger('1.5'), /must be an integer/)
  t.throws(() => v.parseInteger('3000000000'), /must be between/)
  t.equal(v.parsePort('10250'), 10250)
  t.throws(() => v.parsePort('70000'), /must be a port number between 0 and 65535/)
  t.equal(v.parseIp('::'), '::')
  t.throws(() => v.parseIp('1.2.3'), /"1.2.3" is not a valid IP address/)
  t.same(v.parseNodeIps('10.0.0.1,fd00::1'), ['10.0.0.1', 'fd00::1'])
  t.throws(() => v.parseNodeIps('10.0.0.1,10.0.0.2'), /one IPv4 and one IPv6/)
  t.throws(() => v.parseNodeIps('a,b,c'), /one IP or a dual-stack pair/)
  t.equal(v.parseEnum('static', ['none', 'static']), 'static')
  t.throws(() => v.parseEnum('dynamic', ['none', 'static']), /must be one of none, static/)
  t.equal(v.parsePercent('10%'), 10)
  t.throws(() => v.parsePercent('101%'), /between 0% and 100%/)
  t.throws(() => v.parsePercent('10'), /not a percentage/)
})

t.test('parses lists and maps', async t => {
  t.same(v.parseStringList('a, b,,c'), ['a', 'b', 'c'])
  t.same(v.parseKeyValues('a=1, b = 2,,c='), { a: '1', b: '2', c: '' })
  t.throws(() => v.parseKeyValues('a=1,b'), /malformed pair "b", expect key=value/)
  t.throws(() => v.parseKeyValues('=1'), /the key is empty/)
  t.same(v.parseKeyBools('A=true,B=false'), { A: true, B: false })
  t.throws(() => v.parseKeyBools('A=maybe'), /value of A must be true or false, got "maybe"/)
  t.same(v.parseLabels('a=1,b'), { a: '1', b: '' })
  t.same(v.parseCpuList('0-3,8'), [0, 1, 2, 3, 8])
  t.same(v.parseCpuList(''), [])
  t.throws(() => v.parseCpuList('3-1'), /ends before it starts/)
  t.throws(() => v.parseCpuList('a'), /is not a CPU or CPU range/)
})

t.test('keeps repeated header names in order', async t => {
  const h = v.parseHeaders('a:hello,b:again,c:world')
  v.parseHeaders('b:beautiful', h)
  t.same(h, { a: ['hello'], b: ['again', 'beautiful'], c: ['world'] })
  t.same(v.parseHeaders('x:a:b'), { x: ['a:b'] }, 'the value may hold colons')
  t.throws(() => v.parseHeaders('novalue'), /expect name:value/)
  t.throws(() => v.parseHeaders(':v'), /header name is empty/)
})

t.test('parses taints', async t => {
  t.same(r.parseTaints('dedicated=edge:NoSchedule,gpu:NoExecute'), [
    { key: 'dedicated', value: 'edge', effect: 'NoSchedule' }, { key: 'gpu', value: '', effect: 'NoExecute' }
  ])
  t.throws(() => r.parseTaints('a=b'), /must be key=value:effect or key:effect/)
  t.throws(() => r.parseTaints('a=b:Never'), /effect "Never"; must be NoSchedule, PreferNoSchedule or NoExecute/)
  t.throws(() => r.parseTaints('-bad=x:NoSchedule'), /key "-bad" is invalid/)
  t.throws(() => r.parseTaints('Bad.Prefix/k=x:NoSchedule'), /invalid prefix/)
  t.throws(() => r.parseTaints('k=bad value:NoSchedule'), /value "bad value" of "k" is invalid/)
  t.throws(() => r.parseTaints('k=a:NoSchedule,k=b:NoSchedule'), /repeats key k with effect NoSchedule/)
})

t.test('parses eviction thresholds', async t => {
  const map = r.parseLessThanMap('memory.available<100Mi,nodefs.available<10%')
  t.same(r.thresholdsFromMap(map), [
    { signal: 'memory.available', operator: 'LessThan', value: { quantity: 100 * 2 ** 20 } },
    { signal: 'nodefs.available', operator: 'LessThan', value: { percent: 10 } }
  ])
  t.throws(() => r.parseLessThanMap('memory.available>100Mi'), /only < is allowed/)
  t.throws(() => r.thresholdsFromMap({ 'cpu.available': '1' }), /unsupported eviction signal "cpu.available"/)
  t.throws(() => r.thresholdsFromMap({ 'nodefs.available': '120%' }), /between 0% and 100%/)
  t.throws(() => r.thresholdsFromMap({ 'memory.available': '-1Mi' }), /must not be negative/)
  t.same(r.gracePeriodsFromMap({ 'memory.available': '1m30s' }), { 'memory.available': 90_000 })
  t.throws(() => r.gracePeriodsFromMap({ 'memory.available': '-1s' }), /must not be negative/)
  t.same(r.reclaimsFromMap({ 'imagefs.available': '2Gi' }), { 'imagefs.available': { quantity: 2 * 2 ** 30 } })
})

t.test('parses reservations and NUMA memory', async t => {
  t.same(r.reservationFromMap({ cpu: '200m', memory: '500Mi', 'ephemeral-storage': '1Gi', pid: '1000' }), { cpu: 200, memory: 500 * 2 ** 20, 'ephemeral-storage': 2 ** 30, pid: 1000 })
  t.throws(() => r.reservationFromMap({ gpu: '1' }), /cannot reserve "gpu"/)
  t.same(r.qosReservedFromMap({ memory: '50%' }), { memory: 50 })
  t.throws(() => r.qosReservedFromMap({ cpu: '50%' }), /only memory/)
  t.same(r.parseReservedMemory('0:memory=1Gi,hugepages-1M=2Gi;1:memory=2Gi'), [
    { numaNode: 0, limits: { memory: 2 ** 30, 'hugepages-1M': 2 * 2 ** 30 } }, { numaNode: 1, limits: { memory: 2 * 2 ** 30 } }
  ])
  t.throws(() => r.parseReservedMemory('memory=1Gi'), /must be numaNode:type=quantity/)
  t.throws(() => r.parseReservedMemory('0:disk=1Gi'), /unknown memory type "disk"/)
  t.throws(() => r.parseReservedMemory('0:memory=lots'), /is not a quantity/)
})

t.test('formats bytes and CPU lists back to their short forms', async t => {
  t.equal(formatBytes(2 ** 30), '1Gi')
  t.equal(formatBytes(1536 * 1024), '1536Ki')
  t.equal(formatBytes(1000), '1000')
  t.equal(formatBytes(0), '0')
  t.equal(v.formatCpuList([0, 1, 2, 3, 8, 10, 11]), '0-3,8,10-11')
  t.equal(v.formatCpuList([]), '')
})
