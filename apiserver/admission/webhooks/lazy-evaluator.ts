// An ExpressionEvaluator made on first use: the sandbox pool's threads start only once a match condition is compiled.

import type { ExpressionEvaluator } from '../../../sandbox/expression-evaluator.js'

type Closable = ExpressionEvaluator & { close?(): Promise<void> | void }

export function lazyExpressionEvaluator (create: () => Closable): ExpressionEvaluator & { dispose(): Promise<void> } {
  let made: Closable | undefined
  return {
    async compileExpression (expression, environment, options) {
      made ??= create()
      return await made.compileExpression(expression, environment, options)
    },
    async dispose () { const m = made; made = undefined; await m?.close?.() }
  }
}
