#!/usr/bin/env node
// Entry of the `orchlet` command: the build in dist/ (made by `npm ci` through `prepare`), else the TypeScript source through tsx.

import { existsSync } from 'node:fs'

const built = new URL('../dist/agent/cli/main.js', import.meta.url)
let cli
if (existsSync(built)) {
  cli = await import(built.href)
} else {
  const { register } = await import('tsx/esm/api')
  register()
  cli = await import(new URL('../agent/cli/main.ts', import.meta.url).href)
}
await cli.cli()
