// Script entry for running the CLI from source (`node --import tsx apiserver/cli/run.ts up ...`), as the e2e tests do.

import { main } from './main.js'

process.exitCode = await main(process.argv.slice(2))
// Leftover handles (a stuck client socket, a log transport) must not keep a stopped server alive.
setTimeout(() => process.exit(), 2000).unref()
