#!/usr/bin/env node
// Entry of the `orchlet` command.

import { loadCli } from './entry.js'

const cli = await loadCli('agent/cli/main')
await cli.cli()
