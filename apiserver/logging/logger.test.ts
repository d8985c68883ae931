import t from 'tap'
import { PassThrough } from 'node:stream'
import { createLogger, levelForVerbosity, LoggingOptionError, parseLoggingFormat, parseVmodule, vmoduleVerbosity, type LoggingOptions } from './logger.js'

function capture (o: Omit<LoggingOptions, 'stream'>): { lines: () => string[], logger: ReturnType<typeof createLogger> } {
  const stream = new PassThrough()
  let text = ''
  stream.on('data', (b: Buffer) => { text += b.toString() })
  return { logger: createLogger({ ...o, stream }), lines: () => text.split('\n').filter(l => l !== '') }
}

t.test('json format writes one JSON object per line', async t => {
  const { logger, lines } = capture({ format: 'json' })
  logger.info({ node: 'n1' }, 'registered node')
  await new Promise(resolve => setImmediate(resolve))
  const [line] = lines()
  t.match(JSON.parse(line!), { msg: 'registered node', node: 'n1', level: 30 })
})

t.test('text format writes readable lines, not JSON', async t => {
  const { logger, lines } = capture({ format: 'text' })
  logger.child({ component: 'orchlet' }).info({ node: 'n1' }, 'registered node')
  await new Promise(resolve => setImmediate(resolve))
  const [line] = lines()
  t.match(line, /INFO.*orchlet: registered node node="n1"$/)
  t.throws(() => JSON.parse(line!))
})

t.test('-v raises the level: 4 debug, 6 trace', async t => {
  t.equal(levelForVerbosity(0), 'info')
  t.equal(levelForVerbosity(4), 'debug')
  t.equal(levelForVerbosity(6), 'trace')
  const { logger, lines } = capture({ format: 'json', verbosity: 4 })
  logger.debug('shown at v=4')
  logger.trace('hidden at v=4')
  await new Promise(resolve => setImmediate(resolve))
  t.same(lines().map(l => JSON.parse(l).msg), ['shown at v=4'])
})

t.test('--vmodule gives a component its own verbosity', async t => {
  const { logger, lines } = capture({ format: 'text', vmodule: parseVmodule('sched*=6') })
  logger.child({ component: 'scheduler' }).trace('scheduler detail')
  logger.child({ component: 'orchlet' }).debug('orchlet detail')
  logger.child({ component: 'scheduler' }).child({ pod: 'p' }).trace('nested detail')
  await new Promise(resolve => setImmediate(resolve))
  const out = lines().join('\n')
  t.match(out, /scheduler detail/)
  t.match(out, /nested detail/)
  t.notMatch(out, /orchlet detail/)
})

t.test('bad values are refused with one line', async t => {
  t.throws(() => parseVmodule('x'), LoggingOptionError)
  t.throws(() => parseVmodule('x=a'), /invalid --vmodule entry "x=a": want pattern=N/)
  t.same(parseVmodule('a=1, b*=3'), { a: 1, 'b*': 3 })
  t.equal(vmoduleVerbosity({ 'b*': 3 }, 'bee'), 3)
  t.equal(vmoduleVerbosity({ 'b*': 3 }, 'abe'), undefined)
  t.throws(() => parseLoggingFormat('xml'), /invalid --logging-format "xml": want text or json/)
  t.throws(() => createLogger({ format: 'json', vmodule: { a: 1 } }), /works only with the text format/)
})
