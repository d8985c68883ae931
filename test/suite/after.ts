// Runs once after the test suite (tap's `after`): stops the containerd the tests started (.ci/containerd-stop.sh),
// and leaves one that was running before the suite.
import { execFileSync } from 'node:child_process'
import { existsSync, rmSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { containerdRunning, preexistingMarker } from './containerd-state.js'

const stopScript = fileURLToPath(new URL('../../.ci/containerd-stop.sh', import.meta.url))

if (existsSync(preexistingMarker)) {
  rmSync(preexistingMarker, { force: true })
} else if (containerdRunning()) {
  execFileSync('bash', [stopScript], { stdio: 'inherit', timeout: 60_000 })
}
