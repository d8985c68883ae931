import t from 'tap'
import { ctx, openFixture } from './testing.js'
import type { WriteAttributes } from './admission.js'
import { forbidden } from '../errors/status-error.js'

t.test('a connect passes mutating then validating admission as CONNECT with the options object as the object', async t => {
  const seen: WriteAttributes[] = []
  const fx = await openFixture({
    mutatingAdmission: [{
      async admit (a: WriteAttributes) {
        if (a.operation !== 'CONNECT') return
        a.object.container = 'sidecar'
      }
    }],
    admission: [{
      async admit (a: WriteAttributes) {
        if (a.operation !== 'CONNECT') return
        seen.push(a)
        if ((a.object.command as string[]).includes('rm')) throw forbidden({ group: '', resource: 'pods' }, a.name, 'no rm')
      }
    }]
  })
  t.teardown(() => fx.close())
  const target = { group: '', version: 'v1', resource: 'pods', subresource: 'exec', namespace: 'default', name: 'web' }
  const options: Record<string, unknown> = { kind: 'PodExecOptions', apiVersion: 'v1', stdout: true, command: ['ls'] }
  await fx.registry.admitConnect(ctx(), target, options)
  t.equal(seen.length, 1)
  const a = seen[0]
  t.equal(a.operation, 'CONNECT')
  t.equal(a.definition.kind, 'PodExecOptions', 'the request kind is the options kind')
  t.equal(a.definition.plural, 'pods')
  t.same([a.subresource, a.namespace, a.name], ['exec', 'default', 'web'])
  t.same(a.object, { kind: 'PodExecOptions', apiVersion: 'v1', stdout: true, command: ['ls'], container: 'sidecar' }, 'the validating plugin sees the mutation')
  t.equal(options.container, 'sidecar', 'the caller keeps the options as admission left them')
  const refused = await fx.registry.admitConnect(ctx(), target, { kind: 'PodExecOptions', apiVersion: 'v1', command: ['rm', '-rf'] }).catch(e => e)
  t.equal(refused.code, 403)
  t.equal(refused.message, 'pods "web" is forbidden: no rm')
  const missing = await fx.registry.admitConnect(ctx(), { ...target, resource: 'nopes' }, options).catch(e => e)
  t.equal(missing.code, 404)
})
