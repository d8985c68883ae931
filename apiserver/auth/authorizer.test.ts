import t from 'tap'
import { buildAuthorizer, parseAuthorizationModes } from './authorizer.js'
import { resourceAttributes, type Authorizer } from './types.js'

t.test('authorization modes parse in order; Node is a mode, unknown ones are refused', async t => {
  t.same(parseAuthorizationModes('Node,RBAC'), ['Node', 'RBAC'])
  t.throws(() => parseAuthorizationModes('ABAC'), /authorization-mode "ABAC" is not a valid mode \(not implemented by orch\); allowed: AlwaysAllow, AlwaysDeny, Node, RBAC, Webhook/)
  t.same(parseAuthorizationModes('Node,RBAC,Webhook'), ['Node', 'RBAC', 'Webhook'])
  t.throws(() => parseAuthorizationModes('RBAC,RBAC'), /has mode specified more than once/)
})

t.test('the chain asks system:masters first, then each mode in order; the factories are called once per enabled mode', async t => {
  const calls: string[] = []
  const named = (name: string, allows: string): Authorizer => ({
    authorize: async a => a.user.username === allows ? { decision: 'allow', reason: `${name} says yes` } : { decision: 'noOpinion', reason: `${name}: no` }
  })
  const chain = buildAuthorizer(['Node', 'RBAC'], {
    node: () => { calls.push('node'); return named('node', 'system:node:n1') },
    rbac: () => { calls.push('rbac'); return named('rbac', 'alice') }
  })
  t.same(calls, ['node', 'rbac'])
  const ask = async (username: string, groups: string[] = []) => await chain.authorize(resourceAttributes({ username, groups }, { verb: 'get', resource: 'pods' }))
  t.same(await ask('system:node:n1'), { decision: 'allow', reason: 'node says yes' })
  t.same(await ask('alice'), { decision: 'allow', reason: 'rbac says yes' })
  t.same(await ask('bob'), { decision: 'noOpinion', reason: 'node: no\nrbac: no' })
  t.equal((await ask('root', ['system:masters'])).decision, 'allow')
  t.throws(() => buildAuthorizer(['Node'], { rbac: () => named('rbac', 'x') }), /Node needs the node authorizer/)
  t.equal((await buildAuthorizer(['RBAC'], () => named('rbac', 'alice')).authorize(resourceAttributes({ username: 'alice', groups: [] }, { verb: 'get' }))).decision, 'allow',
    'a bare RBAC maker still works')
})
