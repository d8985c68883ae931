// The error catalogue: codes documented, errors carry code, position and cost.

import t from 'tap'
import { readFileSync } from 'node:fs'
import { SandboxError, SandboxErrorCodes, positionOf } from './errors.js'

t.test('every error code is documented in README.md', async (t) => {
  const readme = readFileSync(new URL('./README.md', import.meta.url), 'utf8')
  for (const code of Object.values(SandboxErrorCodes)) t.match(readme, new RegExp('\\| `' + code + '` \\|'), `${code} is in the catalogue table`)
})

t.test('a SandboxError carries its code, position and cost', async (t) => {
  const e = new SandboxError('CEL_ERR_COMPILE', 'bad', { position: positionOf('a\nbc', 3), cost: 4 })
  t.equal(e.code, 'CEL_ERR_COMPILE')
  t.same(e.position, { offset: 3, line: 2, column: 2 })
  t.equal(e.cost, 4)
  t.ok(e instanceof Error)
})
