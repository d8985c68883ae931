// Starts `orch up` (or another `orch` command) from source as a child process for end-to-end tests, and waits for its kubeconfig.

import { execFile, spawn, type ChildProcess } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Agent } from 'undici'
import { kubeconfigDispatcher } from './tls-client.js'

const ROOT = fileURLToPath(new URL('..', import.meta.url))

export interface OrchProcess {
  child: ChildProcess
  kubeconfig: string
  server: string
  /** For raw requests (undici `dispatcher` option): trusts the server's CA, authenticates as the administrator. */
  dispatcher: Agent
  logs(): string
  /** Sends SIGTERM and resolves with the exit code. */
  stop(): Promise<number | null>
}

export interface ComponentProcess {
  child: ChildProcess
  logs(): string
  /** Resolves with the exit code once the process ended. */
  exited: Promise<number | null>
  /** Sends `signal` (SIGTERM by default) and resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>
}

/** Runs another `orch` command (controller-manager, scheduler) from source, capturing its output. */
export function spawnOrch (args: string[]): ComponentProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'apiserver/cli/run.ts'), ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  child.stdout!.on('data', (d: Buffer) => { output += d.toString() })
  child.stderr!.on('data', (d: Buffer) => { output += d.toString() })
  const exited = new Promise<number | null>(resolve => child.once('exit', code => resolve(code)))
  return {
    child,
    logs: () => output,
    exited,
    stop: async (signal = 'SIGTERM') => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal)
      return await exited
    }
  }
}

/** `command` is `up` (control plane and orchlet) or `apiserver` (the API server alone). */
export async function startOrch (dataDir: string, timeoutMs = 30_000, extraArgs: string[] = [], command: 'up' | 'apiserver' = 'up'): Promise<OrchProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'apiserver/cli/run.ts'), command, '--data-dir', dataDir, '--port', '0', '--log-level', 'info', ...extraArgs], {
    cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe']
  })
  let output = ''
  child.stdout!.on('data', (d: Buffer) => { output += d.toString() })
  child.stderr!.on('data', (d: Buffer) => { output += d.toString() })
  const exited = new Promise<number | null>(resolve => child.once('exit', code => resolve(code)))
  const kubeconfig = join(dataDir, 'kubeconfig')
  const deadline = Date.now() + timeoutMs
  while (!existsSync(kubeconfig)) {
    if (child.exitCode !== null) throw new Error(`orch ${command} exited with ${child.exitCode}:\n${output}`)
    if (Date.now() > deadline) { child.kill('SIGKILL'); throw new Error(`orch ${command} did not write a kubeconfig in time:\n${output}`) }
    await new Promise(resolve => setTimeout(resolve, 50))
  }
  const server = /server: (\S+)/.exec(readFileSync(kubeconfig, 'utf8'))?.[1] ?? ''
  const dispatcher = kubeconfigDispatcher(kubeconfig)
  return {
    child,
    kubeconfig,
    server,
    dispatcher,
    logs: () => output,
    stop: async () => {
      if (child.exitCode === null) child.kill('SIGTERM')
      const code = await exited
      await dispatcher.destroy()
      return code
    }
  }
}

export interface KubectlRun { code: number; stdout: string; stderr: string }

export interface KubectlOptions {
  /** Another kubectl than the /usr/bin/kubectl dispatcher, e.g. a pinned `kubectl.1.33`. */
  binary?: string
  /** Extra environment (e.g. KUBE_EDITOR). */
  env?: Record<string, string>
}

/** Runs the real /usr/bin/kubectl against a kubeconfig with its own discovery cache; never rejects. */
export function runKubectl (kubeconfig: string, cacheDir: string, args: string[], opts: KubectlOptions = {}): Promise<KubectlRun> {
  const all = ['--kubeconfig', kubeconfig, '--cache-dir', cacheDir, '--request-timeout=20s', ...args]
  const env = opts.env === undefined ? undefined : { ...process.env, ...opts.env }
  return new Promise(resolve => {
    execFile(opts.binary ?? '/usr/bin/kubectl', all, { timeout: 60_000, env }, (err, stdout, stderr) => {
      const code = err === null ? 0 : typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : 1
      resolve({ code, stdout, stderr })
    })
  })
}
