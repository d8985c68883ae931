// Loggers as Kubernetes components' logging options ask for them: --logging-format text|json, -v and --vmodule.
// Shared by the API server, the controller manager, the scheduler and the orchlet (it sits low, like feature gates).

import { pino, type Level, type Logger } from 'pino'
import PinoPretty from 'pino-pretty'

export type LoggingFormat = 'text' | 'json'

export interface LoggingOptions {
  format: LoggingFormat
  /** klog's -v: 0-3 info, 4-5 debug, 6 and above trace (request-level detail, as -v=6 shows requests). */
  verbosity?: number
  /** A pino level that wins over `verbosity` when given (orch's own --log-level). */
  level?: string
  /** --vmodule: a verbosity per component, by glob on the logger's `component` binding (`orchlet=6,sched*=4`). */
  vmodule?: Readonly<Record<string, number>>
  /** File descriptor written to (default 1, stdout). */
  fd?: 1 | 2
  /** A stream written to instead of `fd` (tests). */
  stream?: NodeJS.WritableStream
  /** Colours in the text format (default: when the descriptor is a TTY). */
  colorize?: boolean
  /** Extra base bindings; `undefined` drops pid and hostname as the orchlet's JSON does. */
  base?: Record<string, unknown> | undefined
}

export class LoggingOptionError extends Error {
  readonly code = 'ORCH_ERR_LOGGING_OPTION'
  override readonly name = 'LoggingOptionError'
}

/** The pino level of a klog verbosity. */
export function levelForVerbosity (v: number): Level {
  if (v >= 6) return 'trace'
  if (v >= 4) return 'debug'
  return 'info'
}

/** `pattern=N[,pattern=N...]` as klog's --vmodule; an empty text is no patterns. */
export function parseVmodule (text: string): Record<string, number> {
  const out: Record<string, number> = {}
  for (const part of text.split(',').map(s => s.trim()).filter(s => s !== '')) {
    const eq = part.lastIndexOf('=')
    const pattern = part.slice(0, eq)
    const n = part.slice(eq + 1)
    if (eq <= 0 || !/^\d+$/.test(n)) throw new LoggingOptionError(`invalid --vmodule entry "${part}": want pattern=N`)
    out[pattern] = Number(n)
  }
  return out
}

/** --logging-format's value, checked. */
export function parseLoggingFormat (text: string): LoggingFormat {
  if (text === 'text' || text === 'json') return text
  throw new LoggingOptionError(`invalid --logging-format "${text}": want text or json`)
}

function globMatcher (pattern: string): RegExp {
  const body = pattern.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.')
  return new RegExp(`^${body}$`)
}

/** The verbosity --vmodule gives a component, or undefined when no pattern names it. */
export function vmoduleVerbosity (vmodule: Readonly<Record<string, number>>, component: string): number | undefined {
  for (const [pattern, v] of Object.entries(vmodule)) if (globMatcher(pattern).test(component)) return v
  return undefined
}

const HIDDEN_KEYS = new Set(['level', 'time', 'msg', 'pid', 'hostname', 'component'])

/** `component: message key="value" n=3`, as klog's text format writes structured pairs. */
function textMessage (log: Record<string, unknown>): string {
  const pairs = Object.entries(log).filter(([k]) => !HIDDEN_KEYS.has(k))
    .map(([k, v]) => `${k}=${v instanceof Object && 'message' in v && 'stack' in v ? JSON.stringify(String(v.message)) : JSON.stringify(v)}`)
  const head = typeof log.component === 'string' ? `${log.component}: ` : ''
  return [`${head}${String(log.msg ?? '')}`, ...pairs].join(' ')
}

/**
 * A logger writing JSON lines or human-readable text. Child loggers with a `component` binding named by --vmodule
 * take that component's verbosity (klog matches source files; orch's unit of logging is the component).
 */
export function createLogger (o: LoggingOptions): Logger {
  if (o.format === 'json' && o.vmodule !== undefined && Object.keys(o.vmodule).length > 0) {
    throw new LoggingOptionError('--vmodule works only with the text format, not --logging-format=json')
  }
  const fd = o.fd ?? 1
  const level = o.level ?? levelForVerbosity(o.verbosity ?? 0)
  const vmodule = o.vmodule ?? {}
  const onChild = (child: Logger): void => {
    const component = child.bindings().component
    if (typeof component !== 'string') return
    const v = vmoduleVerbosity(vmodule, component)
    if (v !== undefined) child.level = levelForVerbosity(v)
  }
  const options = { level, onChild, ...('base' in o ? { base: o.base } : {}) }
  if (o.format === 'json') return pino(options, o.stream ?? pino.destination({ fd, sync: true }))
  const colorize = o.colorize ?? (o.stream === undefined && (fd === 1 ? process.stdout.isTTY : process.stderr.isTTY) === true)
  const text = PinoPretty({
    colorize,
    sync: true,
    destination: o.stream ?? fd,
    hideObject: true,
    translateTime: 'SYS:yyyy-mm-dd HH:MM:ss.l',
    ignore: 'pid,hostname',
    messageFormat: textMessage
  })
  return pino(options, text)
}
