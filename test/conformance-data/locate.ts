// Locates the public conformance data carried in the repository (test/conformance-data), for tests and harnesses.

import { fileURLToPath } from 'node:url'

/** The absolute path of a file or folder inside test/conformance-data. */
export function conformanceData (relative = ''): string {
  return fileURLToPath(new URL(relative === '' ? './' : relative, import.meta.url))
}
