#!/usr/bin/env node
// The orchlet command: the compiled CLI (npm `prepare` builds dist/ with tsc -p tsconfig.build.json).
import { cli } from '../dist/agent/cli/main.js'

await cli()
