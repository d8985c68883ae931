import t from 'tap'
import { createSandboxPool } from '../../../sandbox/pool.js'
import { lazyExpressionEvaluator } from './lazy-evaluator.js'
import { MATCH_CONDITION_ENVIRONMENT } from './match-environment.js'

t.test('the pool is made at the first compile, once, and closed by dispose', async t => {
  let made = 0
  const lazy = lazyExpressionEvaluator(() => { made++; return createSandboxPool({ size: 1 }) })
  t.equal(made, 0)
  const p = await lazy.compileExpression("request.operation == 'CREATE'", MATCH_CONDITION_ENVIRONMENT)
  await lazy.compileExpression('object != null', MATCH_CONDITION_ENVIRONMENT)
  t.equal(made, 1)
  t.equal((await p.evaluate({ object: null, oldObject: null, request: { operation: 'CREATE' } })).value, true)
  p.release()
  await lazy.dispose()
})
