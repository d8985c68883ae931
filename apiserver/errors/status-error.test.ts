import t from 'tap'
import { invalid } from './status-error.js'

t.test('an Invalid error reports a cause found twice once, in the message and the causes', async t => {
  const dup = { reason: 'FieldValueRequired', field: 'spec.selector', message: 'Required value' }
  const err = invalid('apps', 'Deployment', 'web', [dup, { ...dup }, { reason: 'FieldValueInvalid', field: 'spec.replicas', message: 'Invalid value: -1: must be greater than or equal to 0' }])
  t.equal(err.code, 422)
  t.equal(err.message, 'Deployment.apps "web" is invalid: [spec.selector: Required value, spec.replicas: Invalid value: -1: must be greater than or equal to 0]')
  t.same((err.toStatus().details as { causes: Array<{ field: string }> }).causes.map(c => c.field), ['spec.selector', 'spec.replicas'])
  t.equal(invalid('', 'ConfigMap', 'c', [dup, dup]).message, 'ConfigMap "c" is invalid: spec.selector: Required value')
})
