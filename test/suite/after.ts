// Runs once after the test suite (tap's `after`): stops the containerd this run's tests started (.ci/containerd-stop.sh),
// and leaves alone one that was started otherwise (before the suite, by hand or by another tap run meanwhile).
import { execFileSync } from 'node:child_process'
import { rmSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { containerdRunning, startedByTestsMarker, startedByThisRun } from './containerd-state.js'

const stopScript = fileURLToPath(new URL('../../.ci/containerd-stop.sh', import.meta.url))

if (startedByThisRun()) {
  if (containerdRunning()) execFileSync('bash', [stopScript], { stdio: 'inherit', timeout: 60_000 })
  rmSync(startedByTestsMarker, { force: true })
}
