import t from 'tap'
import { matchedTarget, objectSelectorMatches, ruleMatches, type MatchInput } from './matching.js'
import type { ResourceDefinition } from '../../schema/types.js'

const pod = (subresource = '', operation = 'CREATE', namespace = 'default'): MatchInput =>
  ({ group: '', version: 'v1', resource: 'pods', subresource, kind: 'Pod', operation, namespace })
const rule = (resources: string[], extra: Record<string, unknown> = {}): Record<string, unknown> =>
  ({ operations: ['*'], apiGroups: [''], apiVersions: ['v1'], resources, ...extra })

t.test('resources: a name matches the resource only; */status, pods/* and */* reach subresources', async t => {
  t.ok(ruleMatches(rule(['pods']), pod()))
  t.notOk(ruleMatches(rule(['pods']), pod('status')))
  t.ok(ruleMatches(rule(['*/status']), pod('status')))
  t.notOk(ruleMatches(rule(['*/status']), pod()))
  t.ok(ruleMatches(rule(['pods/*']), pod('status')))
  t.ok(ruleMatches(rule(['pods/*']), pod()), 'pods/* includes the resource itself, as in Kubernetes')
  t.ok(ruleMatches(rule(['*']), pod()))
  t.notOk(ruleMatches(rule(['*']), pod('status')))
  t.ok(ruleMatches(rule(['*/*']), pod('binding')))
})

t.test('operations, groups, versions and scope must all match', async t => {
  t.notOk(ruleMatches(rule(['pods'], { operations: ['UPDATE'] }), pod()))
  t.notOk(ruleMatches(rule(['pods'], { apiGroups: ['apps'] }), pod()))
  t.notOk(ruleMatches(rule(['pods'], { apiVersions: ['v2'] }), pod()))
  t.ok(ruleMatches(rule(['pods'], { scope: 'Namespaced' }), pod()))
  t.notOk(ruleMatches(rule(['pods'], { scope: 'Cluster' }), pod()))
  const ns: MatchInput = { group: '', version: 'v1', resource: 'namespaces', subresource: '', kind: 'Namespace', operation: 'CREATE', namespace: 'x' }
  t.ok(ruleMatches(rule(['namespaces'], { scope: 'Cluster' }), ns), 'namespaces are cluster-scoped')
})

t.test('Equivalent finds the other group spelling and other served versions; Exact does not', async t => {
  const served = [{ group: 'apps.orch.io', version: 'v1', plural: 'widgets', kind: 'Widget' }, { group: 'apps.orch.io', version: 'v2', plural: 'widgets', kind: 'Widget' },
    { group: 'apps.k8s.io', version: 'v1', plural: 'widgets', kind: 'Widget' }] as unknown as ResourceDefinition[]
  const m: MatchInput = { group: 'apps.orch.io', version: 'v2', resource: 'widgets', subresource: '', kind: 'Widget', operation: 'CREATE', namespace: 'd' }
  const r = [{ operations: ['CREATE'], apiGroups: ['apps.k8s.io'], apiVersions: ['v1'], resources: ['widgets'] }]
  t.match(matchedTarget(r, 'Equivalent', m, () => served), { group: 'apps.k8s.io', version: 'v1' })
  t.equal(matchedTarget(r, 'Exact', m, () => served), undefined)
  t.equal(matchedTarget([{ ...r[0], apiVersions: ['v1'], apiGroups: ['apps.orch.io'] }], 'Equivalent', m, () => served)?.version, 'v1')
})

t.test('objectSelector: the new or the old object; an empty selector matches all', async t => {
  const sel = { matchLabels: { app: 'x' } }
  t.ok(objectSelectorMatches({}, undefined, undefined))
  t.ok(objectSelectorMatches(sel, { metadata: { labels: { app: 'x' } } }, undefined))
  t.ok(objectSelectorMatches(sel, { metadata: {} }, { metadata: { labels: { app: 'x' } } }))
  t.notOk(objectSelectorMatches(sel, { metadata: {} }, undefined))
})
