#!/usr/bin/env node
// Entry of the `orch` command: the build in dist/ (made by `npm ci` through `prepare`), else the TypeScript source through tsx.

import { existsSync } from 'node:fs'

const built = new URL('../dist/apiserver/cli/main.js', import.meta.url)
let cli
if (existsSync(built)) {
  cli = await import(built.href)
} else {
  const { register } = await import('tsx/esm/api')
  register()
  cli = await import(new URL('../apiserver/cli/main.ts', import.meta.url).href)
}
process.exitCode = await cli.main(process.argv.slice(2))
// Leftover handles (a stuck client socket, a log transport) must not keep a stopped server alive.
setTimeout(() => process.exit(), 2000).unref()
