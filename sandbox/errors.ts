// The sandbox's error catalogue: one typed error with a stable code per failure kind (documented in README.md).

export const SandboxErrorCodes = {
  /** The expression does not parse (syntax, bad literal, structural limits such as nesting depth). */
  CEL_ERR_COMPILE: 'CEL_ERR_COMPILE',
  /** The expression parses but does not type-check against the declared variables. */
  CEL_ERR_TYPE_CHECK: 'CEL_ERR_TYPE_CHECK',
  /** The worst-case cost estimated at compile time is above the per-expression or per-CRD limit. */
  CEL_ERR_COST_ESTIMATE: 'CEL_ERR_COST_ESTIMATE',
  /** Evaluation failed inside CEL (no such key, division by zero, overflow, bad regex, no overload). */
  CEL_ERR_EVAL: 'CEL_ERR_EVAL',
  /** The runtime cost budget (per call or per object) ran out; evaluation stopped at that point. */
  CEL_ERR_COST_BUDGET: 'CEL_ERR_COST_BUDGET',
  /** The QuickJS runtime reached its memory cap. */
  SANDBOX_ERR_MEMORY: 'SANDBOX_ERR_MEMORY',
  /** The evaluation ran past its wall-clock deadline and was interrupted. */
  SANDBOX_ERR_DEADLINE: 'SANDBOX_ERR_DEADLINE',
  /** Guest stack exhausted (deeply nested values or expressions). */
  SANDBOX_ERR_STACK: 'SANDBOX_ERR_STACK',
  /** Variables given to evaluate() are not representable (cycles, functions, unknown variable). */
  SANDBOX_ERR_INPUT: 'SANDBOX_ERR_INPUT',
  /** The sandbox was disposed, or the guest failed in a way that is a bug of ours. */
  SANDBOX_ERR_INTERNAL: 'SANDBOX_ERR_INTERNAL',
} as const

export type SandboxErrorCode = (typeof SandboxErrorCodes)[keyof typeof SandboxErrorCodes]

/** Where in the expression an error points (0-based character offsets), when known. */
export interface SourcePosition {
  offset: number
  line: number
  column: number
}

export class SandboxError extends Error {
  readonly code: SandboxErrorCode
  readonly position?: SourcePosition
  /** The cost counted up to the failure, when the failure happened during evaluation. */
  readonly cost?: number
  /** Compile failures: the error as cel-go's Issues.String() prints it (`ERROR: <input>:1:5: ...` with the caret line). */
  readonly issues?: string

  constructor(code: SandboxErrorCode, message: string, extra: { position?: SourcePosition; cost?: number; issues?: string } = {}) {
    super(message)
    this.name = 'SandboxError'
    this.code = code
    if (extra.position) this.position = extra.position
    if (extra.cost !== undefined) this.cost = extra.cost
    if (extra.issues !== undefined) this.issues = extra.issues
  }
}

export function isSandboxError(e: unknown): e is SandboxError {
  return e instanceof SandboxError
}

/** Turns a character offset into a 1-based line and column. */
export function positionOf(expression: string, offset: number): SourcePosition {
  let line = 1
  let col = 1
  for (let i = 0; i < offset && i < expression.length; i++) {
    if (expression[i] === '\n') {
      line++
      col = 1
    } else col++
  }
  return { offset, line, column: col }
}
