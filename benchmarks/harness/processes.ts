// What the process-based harnesses share: child processes spoken to over IPC, /proc figures of a process, and a GET
// with a client certificate.

import { spawn, type ChildProcess } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { get } from 'node:https'

/** A server's URL and the client certificate and key its harness authenticates with (PEM file paths). */
export interface Creds { url: string, cert: string, key: string }

/** utime+stime of a process in seconds, from /proc (clock ticks of 100 Hz on Linux). */
export function cpuSeconds (pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')
  return (Number(fields[11]) + Number(fields[12])) / 100
}

/** Resident memory of a process in MiB (VmRSS). */
export function rssMiB (pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
  return m ? Number(m[1]) / 1024 : 0
}

export const sleep = async (ms: number): Promise<void> => { await new Promise(resolve => setTimeout(resolve, ms)) }

/** A TypeScript file run with tsx in its own process, its stdout piped and an IPC channel open. */
export function harnessChild (file: string, env: Record<string, string>): ChildProcess {
  return spawn(process.execPath, ['--import', 'tsx', file], {
    env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit', 'ipc']
  })
}

/** The child's next IPC message (after sending `send`, when given); rejects when the child exits first. */
export async function message<T> (c: ChildProcess, send?: unknown): Promise<T> {
  const p = new Promise<T>((resolve, reject) => {
    const onExit = (code: number | null): void => reject(new Error(`child exited ${code}`))
    c.once('message', m => { c.off('exit', onExit); resolve(m as T) })
    c.once('exit', onExit)
  })
  if (send !== undefined) c.send(send as object)
  return await p
}

/** SIGTERM, then waits for the exit; nothing when it has exited already. */
export async function stop (c: ChildProcess): Promise<void> {
  if (c.exitCode !== null || c.signalCode !== null) return
  const exited = new Promise(resolve => c.once('exit', resolve))
  c.kill('SIGTERM')
  await exited
}

/** A GET's body as text. */
export async function httpsGet (creds: Creds, path: string): Promise<string> {
  return await new Promise((resolve, reject) => {
    get(creds.url + path, { cert: creds.cert, key: creds.key, rejectUnauthorized: false }, res => {
      let b = ''
      res.on('data', (c: Buffer) => { b += c.toString() })
      res.on('end', () => resolve(b))
    }).on('error', reject)
  })
}
