// Runs once before the test suite (tap's `before`): notes whether containerd was already running, so the suite
// stops only a containerd it started itself.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { containerdDir, containerdRunning, preexistingMarker } from './containerd-state.js'

if (containerdRunning()) {
  mkdirSync(containerdDir, { recursive: true })
  writeFileSync(preexistingMarker, `${new Date().toISOString()}\n`)
} else {
  rmSync(preexistingMarker, { force: true })
}
