// How a configuration refused at start is reported: one error whose message lists the bad fields as Kubernetes does.

import type { FieldError } from '../../schema/types.js'

/** A configuration refused at start; the message is the one kube-apiserver exits with. */
export class InvalidConfigurationError extends Error {
  override readonly name = 'InvalidConfigurationError'
}

/** A list of field errors as Kubernetes' aggregate prints it: one alone, several in brackets. */
export function aggregate (errs: FieldError[]): string {
  const lines = errs.map(e => `${e.field}: ${e.message}`)
  return lines.length === 1 ? lines[0] : `[${lines.join(', ')}]`
}
