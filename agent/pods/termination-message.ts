// Termination messages as the kubelet keeps them: a host file per attempt mounted at terminationMessagePath, read after exit, or the log tail (FallbackToLogsOnError).

import { chmodSync, closeSync, fstatSync, mkdirSync, openSync, readSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import type { Mount } from '../runtime/runtime.js'
import type { Container } from './pod-types.js'
import { podDir } from './volumes.js'

/** kubecontainer.MaxContainerTerminationMessageLength */
export const MAX_MESSAGE_BYTES = 4096
/** kubecontainer.MaxContainerTerminationMessageLogLines / LogLength */
export const MAX_LOG_LINES = 80
export const MAX_LOG_BYTES = 2048

export const DEFAULT_TERMINATION_MESSAGE_PATH = '/dev/termination-log'

/**
 * The host file of one attempt: <pod dir>/containers/<name>/<attempt>.termination-log. The kubelet
 * names it randomly; naming it by attempt lets a restarted orchlet find an adopted attempt's file.
 */
export function terminationMessageFile (rootDir: string, uid: string, container: string, attempt: number): string {
  return join(podDir(rootDir, uid), 'containers', container, `${attempt}.termination-log`)
}

/** Creates the (empty, world-writable) file and returns the mount that puts it at terminationMessagePath. */
export function terminationMessageMount (hostPath: string, c: Container): Mount {
  mkdirSync(dirname(hostPath), { recursive: true })
  writeFileSync(hostPath, '')
  chmodSync(hostPath, 0o666)
  return { containerPath: c.terminationMessagePath ?? DEFAULT_TERMINATION_MESSAGE_PATH, hostPath, readonly: false }
}

/** The last `max` bytes of a file ('' when it is missing), as the kubelet's tail.ReadAtMost. */
export function readTail (path: string, max: number): string {
  let fd: number
  try { fd = openSync(path, 'r') } catch { return '' }
  try {
    const size = fstatSync(fd).size
    const len = Math.min(size, max)
    const buf = Buffer.alloc(len)
    readSync(fd, buf, 0, len, size - len)
    return buf.toString('utf8')
  } finally { closeSync(fd) }
}

/** The message parts of the last MAX_LOG_LINES lines of a CRI log, at most MAX_LOG_BYTES (the end kept). */
export function lastLogMessage (logPath: string): string {
  // 80 CRI lines fit in far less than 64 KiB unless lines are huge; the byte cap applies last anyway.
  const raw = readTail(logPath, 64 * 1024)
  const lines = raw.split('\n').filter(l => l !== '')
  const parsed: string[] = []
  let partial = ''
  for (const l of lines) {
    const m = /^\S+ (?:stdout|stderr) ([PF]) (.*)$/.exec(l)
    if (m === null) continue
    partial += m[2]!
    if (m[1] === 'F') { parsed.push(`${partial}\n`); partial = '' }
  }
  if (partial !== '') parsed.push(partial)
  const text = parsed.slice(-MAX_LOG_LINES).join('')
  const bytes = Buffer.from(text, 'utf8')
  return bytes.length <= MAX_LOG_BYTES ? text : bytes.subarray(bytes.length - MAX_LOG_BYTES).toString('utf8')
}

export interface TerminatedAttempt {
  container: Container
  exitCode: number
  reason?: string
  /** The runtime's own message for the exit, if any. */
  runtimeMessage?: string
  messageFile?: string
  logPath?: string
}

/** state.terminated.message for an exited attempt (the kubelet's getTerminationMessage + log fallback). */
export function terminationMessage (a: TerminatedAttempt): string | undefined {
  // A container that could not even start has no logs to fall back to.
  const fallback = a.container.terminationMessagePolicy === 'FallbackToLogsOnError' && a.exitCode !== 0 && a.reason !== 'ContainerCannotRun'
  let text = a.messageFile !== undefined ? readTail(a.messageFile, MAX_MESSAGE_BYTES) : ''
  if (text === '' && fallback && a.logPath !== undefined) text = lastLogMessage(a.logPath)
  const parts = [a.runtimeMessage, text].filter((s): s is string => s !== undefined && s !== '')
  return parts.length === 0 ? undefined : parts.join(': ')
}
