#!/usr/bin/env node
// Entry of the `orch` command.

import { loadCli } from './entry.js'

const cli = await loadCli('apiserver/cli/main')
process.exitCode = await cli.main(process.argv.slice(2))
// Leftover handles (a stuck client socket, a log transport) must not keep a stopped server alive.
setTimeout(() => process.exit(), 2000).unref()
