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
    // Programs come from the made evaluator, so only it can own them and batch their policies.
    owns: (p) => made?.owns?.(p) ?? false,
    async evaluatePolicies (batch) {
      if (made?.evaluatePolicies === undefined) throw new Error('the expression evaluator cannot batch policies')
      return await made.evaluatePolicies(batch)
    },
    async dispose () { const m = made; made = undefined; await m?.close?.() }
  }
}
