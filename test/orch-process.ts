// Starts `orch up` from source as a child process for end-to-end tests, and waits for its kubeconfig.

import { execFile, spawn, type ChildProcess } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

const ROOT = fileURLToPath(new URL('..', import.meta.url))

export interface OrchProcess {
  child: ChildProcess
  kubeconfig: string
  server: string
  logs(): string
  /** Sends SIGTERM and resolves with the exit code. */
  stop(): Promise<number | null>
}

export async function startOrch (dataDir: string, timeoutMs = 30_000, extraArgs: string[] = []): Promise<OrchProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'apiserver/cli/run.ts'), 'up', '--data-dir', dataDir, '--port', '0', '--log-level', 'info', ...extraArgs], {
    cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe']
  })
  let output = ''
  child.stdout!.on('data', (d: Buffer) => { output += d.toString() })
  child.stderr!.on('data', (d: Buffer) => { output += d.toString() })
  const exited = new Promise<number | null>(resolve => child.once('exit', code => resolve(code)))
  const kubeconfig = join(dataDir, 'kubeconfig')
  const deadline = Date.now() + timeoutMs
  while (!existsSync(kubeconfig)) {
    if (child.exitCode !== null) throw new Error(`orch up exited with ${child.exitCode}:\n${output}`)
    if (Date.now() > deadline) { child.kill('SIGKILL'); throw new Error(`orch up did not write a kubeconfig in time:\n${output}`) }
    await new Promise(resolve => setTimeout(resolve, 50))
  }
  const server = /server: (\S+)/.exec(readFileSync(kubeconfig, 'utf8'))?.[1] ?? ''
  return {
    child,
    kubeconfig,
    server,
    logs: () => output,
    stop: async () => {
      if (child.exitCode === null) child.kill('SIGTERM')
      return await exited
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
