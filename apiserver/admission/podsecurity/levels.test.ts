// Namespace labels to policy: prefixes, defaults, warn following enforce, invalid values failing closed.

import t from 'tap'
import { levelVersionString, parseVersion, policyFromLabels, latestVersion, type Policy } from './levels.js'

const privileged: Policy = {
  enforce: { level: 'privileged', version: latestVersion },
  audit: { level: 'privileged', version: latestVersion },
  warn: { level: 'privileged', version: latestVersion }
}
const show = (p: Policy): string[] => [levelVersionString(p.enforce), levelVersionString(p.audit), levelVersionString(p.warn)]

t.test('versions are latest or v1.N', async t => {
  t.same(parseVersion('latest'), latestVersion)
  t.same(parseVersion('v1.24'), { latest: false, minor: 24 })
  for (const bad of ['1.24', 'v2.0', 'v1.024', 'v1.', 'v1.x', '']) t.equal(parseVersion(bad), undefined, bad)
})

t.test('orch and Kubernetes label prefixes; orch wins when both are set', async t => {
  t.same(show(policyFromLabels({ 'pod-security.kubernetes.io/audit': 'baseline', 'pod-security.kubernetes.io/audit-version': 'v1.20' }, privileged).policy),
    ['privileged:latest', 'baseline:v1.20', 'privileged:latest'])
  t.same(show(policyFromLabels({ 'pod-security.orch.io/audit': 'restricted', 'pod-security.kubernetes.io/audit': 'baseline' }, privileged).policy),
    ['privileged:latest', 'restricted:latest', 'privileged:latest'])
})

t.test('an explicit stricter enforce level raises warn when no warn level is labelled', async t => {
  t.same(show(policyFromLabels({ 'pod-security.orch.io/enforce': 'baseline', 'pod-security.orch.io/enforce-version': 'v1.25' }, privileged).policy),
    ['baseline:v1.25', 'privileged:latest', 'baseline:v1.25'])
  t.same(show(policyFromLabels({ 'pod-security.orch.io/enforce': 'baseline', 'pod-security.orch.io/warn': 'privileged' }, privileged).policy),
    ['baseline:latest', 'privileged:latest', 'privileged:latest'], 'an explicit warn level stays')
  const strictWarn: Policy = { ...privileged, warn: { level: 'restricted', version: latestVersion } }
  t.same(show(policyFromLabels({ 'pod-security.orch.io/enforce': 'baseline' }, strictWarn).policy)[2], 'restricted:latest', 'a stricter default warn stays')
})

t.test('invalid values are reported and fail closed', async t => {
  const { policy, errors } = policyFromLabels({ 'pod-security.orch.io/enforce': 'strict', 'pod-security.orch.io/enforce-version': 'one' }, privileged)
  t.same(show(policy)[0], 'restricted:latest')
  t.same(errors.map(e => e.label), ['pod-security.orch.io/enforce', 'pod-security.orch.io/enforce-version'])
})
