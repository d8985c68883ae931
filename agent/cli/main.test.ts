import t from 'tap'
import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { join } from 'node:path'

const root = fileURLToPath(new URL('../../', import.meta.url))
// The tsx binary npx would run, called directly so npm's own notices stay out of stderr.
const tsx = join(root, 'node_modules', '.bin', 'tsx')

function orchlet (...args: string[]): { code: number | null, stdout: string, stderr: string } {
  const r = spawnSync(tsx, ['agent/cli/main.ts', ...args], { cwd: root, encoding: 'utf8', timeout: 30_000 })
  return { code: r.status, stdout: r.stdout, stderr: r.stderr }
}

t.test('a broken rule exits non-zero with the one-line error on stderr', async t => {
  const r = orchlet('--image-gc-low-threshold', '90', '--image-gc-high-threshold', '80')
  t.equal(r.code, 1)
  const lines = r.stderr.trimEnd().split('\n')
  t.equal(lines[lines.length - 1], 'invalid value for --image-gc-low-threshold (90): must not be above --image-gc-high-threshold (80)')
  t.equal(r.stdout, '')
})

t.test('an unknown flag exits non-zero naming it', async t => {
  const r = orchlet('--no-such-flag')
  t.equal(r.code, 1)
  t.equal(r.stderr, 'unknown flag: --no-such-flag\n')
})

t.test('--version prints the version and exits 0', async t => {
  const r = orchlet('--version')
  t.equal(r.code, 0)
  t.equal(r.stdout, 'orchlet v1.29.0-orch\n')
})

t.test('--help and -h print the option list and exit 0', async t => {
  for (const flag of ['--help', '-h']) {
    const r = orchlet(flag, '--max-pods', 'ignored-when-asking-for-help')
    t.equal(r.code, 0, flag)
    t.match(r.stdout, /^orchlet: the orch node agent/)
    t.match(r.stdout, /--volume-stats-agg-period duration/)
  }
})
