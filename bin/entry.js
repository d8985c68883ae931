// Loads a command's CLI module: the build in dist/ (made by `npm ci` through `prepare`), else the TypeScript source through tsx.

import { existsSync } from 'node:fs'

/** `relative` is the module path without extension below the package root, e.g. `apiserver/cli/main`. */
export async function loadCli (relative) {
  const built = new URL(`../dist/${relative}.js`, import.meta.url)
  if (existsSync(built)) return await import(built.href)
  const { register } = await import('tsx/esm/api')
  register()
  return await import(new URL(`../${relative}.ts`, import.meta.url).href)
}
