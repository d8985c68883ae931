// Label and field selector parsing and matching.
import t from 'tap'
import { compileSelector, parseLabelSelector, METADATA_FIELDS } from './selectors.js'
import { podFieldLabels } from './strategies/pod.js'
import { isStatusError } from '../errors/status-error.js'

const obj = (labels: Record<string, string>, extra: Record<string, unknown> = {}): Record<string, unknown> =>
  ({ metadata: { name: 'p', namespace: 'ns', labels }, ...extra })

t.test('label selectors match as Kubernetes defines each operator', async t => {
  const cases: Array<[string, Record<string, string>, boolean]> = [
    ['app=web', { app: 'web' }, true],
    ['app==web', { app: 'web' }, true],
    ['app=web', { app: 'db' }, false],
    ['app!=web', { app: 'db' }, true],
    ['app!=web', {}, true],
    ['app in (web, db)', { app: 'db' }, true],
    ['app in (web,db)', { app: 'x' }, false],
    ['app notin (web)', {}, true],
    ['app notin (web)', { app: 'web' }, false],
    ['app', { app: '' }, true],
    ['app', {}, false],
    ['!app', {}, true],
    ['!app', { app: 'x' }, false],
    ['app=web,tier=fe', { app: 'web', tier: 'fe' }, true],
    ['app=web,tier=fe', { app: 'web' }, false],
    ['n>3', { n: '4' }, true],
    ['n<3', { n: '4' }, false],
    ['example.com/role=x', { 'example.com/role': 'x' }, true],
    ['app=', { app: '' }, true]
  ]
  for (const [sel, labels, want] of cases) {
    t.equal(compileSelector(sel, undefined, METADATA_FIELDS).matches(obj(labels)), want, `${sel} on ${JSON.stringify(labels)}`)
  }
})

t.test('malformed label selectors are 400', async t => {
  for (const bad of ['app in web', 'a b', '=x', 'app=(', 'app in ()', 'app,', 'n>x']) {
    try {
      parseLabelSelector(bad)
      t.fail(`accepted ${bad}`)
    } catch (err) {
      t.ok(isStatusError(err) && err.code === 400, bad)
    }
  }
})

t.test('field selectors support =, == and != on supported fields only', async t => {
  const pod = obj({}, { spec: { nodeName: 'n1' }, status: { phase: 'Running' } })
  const fields = { ...METADATA_FIELDS, ...podFieldLabels }
  t.ok(compileSelector(undefined, 'spec.nodeName=n1', fields).matches(pod))
  t.ok(compileSelector(undefined, 'spec.nodeName==n1,status.phase!=Failed', fields).matches(pod))
  t.notOk(compileSelector(undefined, 'metadata.name=q', fields).matches(pod))
  t.ok(compileSelector(undefined, 'metadata.namespace=ns', fields).matches(pod))
  t.ok(compileSelector(undefined, 'spec.nodeName=', fields).matches(obj({})), 'absent field equals the empty string')
  try {
    compileSelector(undefined, 'spec.foo=x', fields)
    t.fail('accepted an unsupported field')
  } catch (err) {
    t.ok(isStatusError(err) && err.code === 400)
    t.equal((err as Error).message, 'field label not supported: spec.foo')
  }
})

t.test('the watch term is a field equality first, else a one-value label equality; it never matches an absent label', async t => {
  const fields = { ...METADATA_FIELDS, ...podFieldLabels }
  const term = (l?: string, f?: string): string | undefined => {
    const w = compileSelector(l, f, fields).watchTerm
    return w === undefined ? undefined : `${w.term}=${w.value}`
  }
  t.equal(term('app=web', 'spec.nodeName=n1'), 'spec.nodeName=n1')
  t.equal(term('tier!=x,app==web'), 'label:app=web')
  t.equal(term('app in (web)'), 'label:app=web')
  t.equal(term('app in (web,db)'), undefined, 'several values: offered every event')
  t.equal(term('app', 'spec.nodeName!=n1'), undefined)
  t.equal(term(undefined, undefined), undefined)
  const empty = compileSelector('app=', undefined, fields).watchTerm!
  t.equal(empty.get(obj({ app: '' })), '', 'an empty label value is a value')
  t.not(empty.get(obj({})), '', 'an absent label is not the empty value')
  t.not(empty.get({}), '', 'nor is an object without metadata')
})
