import t from 'tap'
import { checkNodeLabels, isOrchletLabel, isReservedLabel } from './labels.js'

t.test('labels outside the reserved namespaces are free', async t => {
  for (const key of ['role', 'example.com/tier', 'k8s.example.com/x']) t.doesNotThrow(() => checkNodeLabels({ [key]: 'v' }), key)
})

t.test('the orchlet may set the allowed keys and prefixes of the reserved namespaces', async t => {
  const allowed = [
    'orch.io/hostname', 'orch.io/os', 'orch.io/arch', 'topology.orch.io/region', 'topology.orch.io/zone',
    'failure-domain.beta.orch.io/zone', 'beta.orch.io/instance-type', 'node.orch.io/instance-type', 'beta.orch.io/arch',
    'orchlet.orch.io/anything', 'node.orch.io/pool', 'sub.node.orch.io/x', 'kubernetes.io/hostname',
    'node.kubernetes.io/instance-type', 'kubelet.kubernetes.io/x', 'topology.kubernetes.io/zone'
  ]
  for (const key of allowed) {
    t.ok(isOrchletLabel(key), key)
    t.doesNotThrow(() => checkNodeLabels({ [key]: 'v' }), key)
  }
})

t.test('other labels of the reserved namespaces are refused, all named in one line', async t => {
  for (const key of ['orch.io/role', 'node-role.orch.io/master', 'k8s.io/x', 'x.k8s.io/y', 'node-role.kubernetes.io/master']) {
    t.ok(isReservedLabel(key), key)
    t.notOk(isOrchletLabel(key), key)
  }
  t.throws(() => checkNodeLabels({ 'orch.io/role': 'a', 'k8s.io/x': 'b', ok: 'c' }), /not allowed: k8s\.io\/x, orch\.io\/role$/)
})

t.test('label keys and values must be valid', async t => {
  t.throws(() => checkNodeLabels({ 'a/b/c': 'v' }), /must be a name with an optional DNS subdomain prefix/)
  t.throws(() => checkNodeLabels({ ['x'.repeat(64)]: 'v' }), /is invalid/)
  t.throws(() => checkNodeLabels({ k: 'bad value' }), /value "bad value" of "k" is invalid/)
  t.doesNotThrow(() => checkNodeLabels({ k: '' }))
})
