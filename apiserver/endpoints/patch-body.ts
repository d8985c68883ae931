// Reading a patch body: JSON with its duplicate members found (the scan also bounds nesting depth).

import type { StatusError } from '../errors/status-error.js'
import type { RequestContext } from '../registry/types.js'
import { findDuplicateKeys, MaxDepthError } from './json-duplicates.js'

/** Parses a patch body; duplicate members are found first (the scan also bounds nesting depth). */
export function parse (text: string, decodeError: (why: string) => StatusError): { value: unknown; duplicates: string[] } {
  let duplicates: string[]
  let value: unknown
  try {
    value = JSON.parse(text)
    duplicates = findDuplicateKeys(text)
  } catch (err) {
    if (err instanceof MaxDepthError || err instanceof RangeError) throw decodeError('exceeded max depth')
    throw decodeError((err as Error).message)
  }
  return { value, duplicates }
}

export function strictDecoding (ctx: RequestContext): boolean {
  return ctx.fieldValidation !== 'Ignore'
}
