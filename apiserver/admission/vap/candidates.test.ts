import t from 'tap'
import type { ResourceDefinition } from '../../schema/types.js'
import type { MatchRequest } from './matching.js'
import type { PolicySource } from './source.js'
import type { BindingObject, NamedRule, PolicyObject } from './types.js'
import { createCandidateIndex } from './candidates.js'

const def = (plural: string): ResourceDefinition => ({ group: '', version: 'v1', plural, namespaced: true, kind: 'K' }) as unknown as ResourceDefinition
const configmaps = def('configmaps')
const secrets = def('secrets')
const req = (d: ResourceDefinition, o: Partial<MatchRequest> = {}): MatchRequest => ({ definition: d, operation: 'CREATE', subresource: '', name: 'x', labels: [], ...o })
const rule = (resources: string[], more: Partial<NamedRule> = {}): NamedRule => ({ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources, ...more })

/** A source whose policies and bindings the test changes, counting changes as the watch-fed one does. */
function source (): PolicySource & { set(name: string, rules: NamedRule[], bindingRules?: NamedRule[]): void, unset(name: string): void } {
  const policies = new Map<string, PolicyObject>()
  const bindings = new Map<string, BindingObject>()
  let generation = 0
  return {
    policies, bindings, generation: () => generation,
    compiled: async () => undefined, start: async () => {}, stop: () => {},
    set (name, rules, bindingRules) {
      policies.set(name, { metadata: { name }, spec: { matchConstraints: { resourceRules: rules } } } as PolicyObject)
      bindings.set(name, { metadata: { name }, spec: { policyName: name, ...(bindingRules ? { matchResources: { resourceRules: bindingRules } } : {}) } } as BindingObject)
      generation++
    },
    unset (name) { policies.delete(name); bindings.delete(name); generation++ }
  }
}

const names = (c: Array<[PolicyObject, BindingObject]>): string[] => c.map(([p]) => p.metadata.name)

t.test('the bindings whose rules select a kind of write, in binding order, kept until a policy or binding changes', async t => {
  const s = source()
  const candidatesFor = createCandidateIndex(s)
  s.set('a', [rule(['configmaps'])])
  s.set('b', [rule(['secrets'])])
  s.set('c', [rule(['*'])], [rule(['configmaps'])])
  t.same(names(candidatesFor(req(configmaps))), ['a', 'c'])
  t.same(names(candidatesFor(req(secrets))), ['b'], 'the binding narrows c to configmaps')
  t.same(names(candidatesFor(req(configmaps, { operation: 'DELETE' }))), [])
  t.same(names(candidatesFor(req(configmaps, { subresource: 'status' }))), [], 'a resource does not select its subresources')
  t.equal(candidatesFor(req(configmaps)), candidatesFor(req(configmaps, { name: 'other' })), 'answered from the table')
  s.unset('a')
  t.same(names(candidatesFor(req(configmaps))), ['c'], 'a removed policy is gone at once')
  s.set('d', [rule(['configmaps'], { operations: ['DELETE'] })])
  t.same(names(candidatesFor(req(configmaps, { operation: 'DELETE' }))), ['d'], 'a new policy is seen at once')
})

t.test('a rule that names resources is matched per request', async t => {
  const s = source()
  const candidatesFor = createCandidateIndex(s)
  s.set('named', [rule(['configmaps'], { resourceNames: ['only-me'] })])
  s.set('all', [rule(['configmaps'])])
  t.same(names(candidatesFor(req(configmaps, { name: 'only-me' }))), ['named', 'all'])
  t.same(names(candidatesFor(req(configmaps, { name: 'someone-else' }))), ['all'])
})
