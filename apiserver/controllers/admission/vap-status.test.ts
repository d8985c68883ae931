// The status controller writes type-checking warnings and the observed generation of each policy.
import t from 'tap'
import { until } from '../testing.js'
import { openFixture, silentLogger } from '../../registry/testing.js'
import { inProcessClient } from '../client/in-process.js'
import { startControllerManager } from '../manager.js'
import { createSandboxPool } from '../../../sandbox/pool.js'
import { createPolicyTypeChecker } from '../../admission/vap/type-check.js'
import { VALIDATING_ADMISSION_POLICIES } from './vap-status.js'

t.test('an expression naming a field the matched kind lacks gets a warning; a correct policy none', async t => {
  const pool = createSandboxPool({ size: 1 })
  const fx = await openFixture({ policyExpressions: pool })
  t.teardown(async () => { await fx.close(); await pool.close() })
  const client = inProcessClient(fx.registry, 'kube-apiserver')
  const policies = client.resource(VALIDATING_ADMISSION_POLICIES)
  const policy = (name: string, expression: string) => ({
    apiVersion: 'admissionregistration.orch.io/v1beta1', kind: 'ValidatingAdmissionPolicy', metadata: { name },
    spec: {
      matchConstraints: { resourceRules: [{ apiGroups: ['apps'], apiVersions: ['v1'], operations: ['CREATE'], resources: ['deployments'] }] },
      validations: [{ expression }]
    }
  })
  await policies.create('', policy('typo', 'object.spec.replicaz <= 5'))
  await policies.create('', policy('fine', 'object.spec.replicas <= 5'))
  const cm = startControllerManager({
    client, logger: silentLogger, controllers: ['validatingadmissionpolicy-status-controller'],
    settings: { policyTypeChecker: createPolicyTypeChecker(fx.registry, pool) }
  })
  t.teardown(() => cm.stop())
  const typo = await until(async () => { const p = await policies.get('', 'typo'); return p?.status?.observedGeneration === 1 ? p : undefined })
  const warnings = typo.status.typeChecking.expressionWarnings
  t.equal(warnings.length, 1)
  t.equal(warnings[0].fieldRef, 'spec.validations[0].expression')
  t.match(warnings[0].warning, /^apps\/v1, Kind=Deployment: .*replicaz/s)
  const fine = await until(async () => { const p = await policies.get('', 'fine'); return p?.status?.observedGeneration === 1 ? p : undefined })
  t.same(fine.status.typeChecking ?? {}, {})
})
