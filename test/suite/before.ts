// Runs once before the test suite (tap's `before`): forgets a marker left by a run that ended without its `after`
// when the containerd it named is gone, so this run's `after` does not stop one started otherwise.
import { rmSync } from 'node:fs'
import { containerdRunning, startedByTestsMarker } from './containerd-state.js'

if (!containerdRunning()) rmSync(startedByTestsMarker, { force: true })
