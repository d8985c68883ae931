// Test support: a private etcd cluster started by .ci/etcd.sh (loopback ports, tmp data), with kill/restart of members.
import { execFileSync, spawn } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

export interface TestEtcdCluster {
  dir: string
  endpoints: string[]
  /** Kills member i (SIGKILL), as a crash. */
  kill: (i: number) => void
  /** Starts member i again with its original command line and data. */
  restart: (i: number) => void
  stop: () => void
}

function script (name: string): string {
  for (const rel of ['../../../.ci/', '../../../../.ci/']) {
    const p = fileURLToPath(new URL(rel + name, import.meta.url))
    if (existsSync(p)) return p
  }
  throw new Error(`.ci/${name} not found`)
}

/**
 * Starts a cluster of `members` members, or returns a reason to skip when etcd is not installed and cannot be
 * (not root, or Debian's package is unavailable).
 */
export function startTestEtcd (members = 3): TestEtcdCluster | { skip: string } {
  const dir = execFileSync('mktemp', ['-d', '/tmp/orch-etcd-test.XXXXXX']).toString().trim()
  let out: string
  try {
    out = execFileSync('bash', [script('etcd.sh'), dir, String(members)], { stdio: ['ignore', 'pipe', 'pipe'], timeout: 300_000 }).toString().trim()
  } catch (err) {
    const stderr = String((err as { stderr?: Buffer }).stderr ?? '')
    execFileSync('bash', [script('etcd-stop.sh'), dir])
    if (/is not installed|apt-get .*failed/.test(stderr)) return { skip: `etcd is not available: ${stderr.trim()}` }
    throw new Error(`.ci/etcd.sh failed: ${stderr}`)
  }
  const pidOf = (i: number): number => Number(readFileSync(`${dir}/m${i}.pid`, 'utf8').trim())
  return {
    dir,
    endpoints: out.split(','),
    kill: i => { try { process.kill(pidOf(i), 'SIGKILL') } catch {} },
    restart: i => {
      const cmd = readFileSync(`${dir}/m${i}.cmd`, 'utf8')
      const child = spawn('bash', ['-c', `exec ${cmd} >>${dir}/m${i}.log 2>&1`], { detached: true, stdio: 'ignore' })
      child.unref()
      execFileSync('bash', ['-c', `echo ${child.pid} > ${dir}/m${i}.pid`])
    },
    stop: () => { execFileSync('bash', [script('etcd-stop.sh'), dir]) }
  }
}
