// The one error type of the patch algorithms, with stable codes the HTTP layer maps to statuses.

export type PatchErrorCode =
  /** The patch document itself is malformed (not an array, an operation without `op`, ...). */
  | 'InvalidPatch'
  /** A path or from is not a valid JSON pointer. */
  | 'InvalidPointer'
  /** A path names a location that does not exist. */
  | 'PathNotFound'
  /** An array index is out of range or not a number. */
  | 'InvalidIndex'
  /** A `test` operation found another value. */
  | 'TestFailed'

export class PatchError extends Error {
  readonly code: PatchErrorCode
  constructor (code: PatchErrorCode, message: string) {
    super(message)
    this.name = 'PatchError'
    this.code = code
  }
}

export function isPatchError (err: unknown): err is PatchError {
  return err instanceof PatchError
}
