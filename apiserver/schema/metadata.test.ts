import t from 'tap'
import {
  isQualifiedName, isValidLabelValue, validateAnnotations, validateLabels, validateName, validateObjectMeta,
  validateObjectMetaUpdate, type NameValidation,
} from './metadata.js'
import { formatFieldErrors } from './field-errors.js'

const subdomainMsg = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
const labelMsg = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
const dns1035Msg = "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"
const nameRegexMsg = "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"

t.test('name rules per kind', async (t) => {
  const cases: Array<[NameValidation, string, string[]]> = [
    ['subdomain', 'web-1.example', []],
    ['subdomain', 'Foo_bar', [subdomainMsg]],
    ['subdomain', 'a'.repeat(254), ['must be no more than 253 characters']],
    ['label', 'kube-system', []],
    ['label', 'a.b', [labelMsg]],
    ['label', 'a'.repeat(64), ['must be no more than 63 characters']],
    ['dns1035', 'my-svc', []],
    ['dns1035', '1svc', [dns1035Msg]],
    ['path', 'system:admin', []],
    ['path', '..', ["may not be '..'"]],
    ['path', 'a/b%c', ["may not contain '/'", "may not contain '%'"]],
  ]
  for (const [rule, name, want] of cases) t.same(validateName(name, rule), want, `${rule} ${name.slice(0, 20)}`)
  t.same(validateName('web-', 'subdomain', true), [], 'generateName may end with a dash')
})

t.test('qualified names and label values', async (t) => {
  const cases: Array<[string, string[]]> = [
    ['app', []],
    ['app.orch.io/name', []],
    ['/x', ['prefix part must be non-empty']],
    ['a/', ['name part must be non-empty', nameRegexMsg]],
    ['Foo_bar!', [nameRegexMsg]],
    ['a/b/c', ["a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"]],
    ['x'.repeat(64), ['name part must be no more than 63 characters']],
  ]
  for (const [key, want] of cases) t.same(isQualifiedName(key), want, key.slice(0, 20))
  t.same(isValidLabelValue(''), [])
  t.same(isValidLabelValue('my_value.1'), [])
  t.match(isValidLabelValue('-bad'), [/^a valid label must be an empty string/])
})

t.test('labels and annotations errors print as Kubernetes prints them', async (t) => {
  t.equal(formatFieldErrors(validateLabels({ 'Foo_bar!': 'x' })), `metadata.labels: Invalid value: "Foo_bar!": ${nameRegexMsg}`)
  t.match(validateLabels({ ok: 'not ok!' }), [{ type: 'FieldValueInvalid', field: 'metadata.labels', message: /^Invalid value: "not ok!": a valid label/ }])
  t.same(validateAnnotations({ 'Example.COM/Key': 'v' }), [], 'annotation keys are case-insensitive')
  t.same(validateAnnotations({ a: 'x'.repeat(256 * 1024) }), [
    { type: 'FieldValueTooLong', field: 'metadata.annotations', message: 'Too long: must have at most 262144 bytes' },
  ])
})

t.test('object meta rules', async (t) => {
  const ns = { namespaced: true, isCreate: true }
  const cases: Array<[string, unknown, typeof ns & { nameValidation?: NameValidation }, string[]]> = [
    ['valid', { name: 'a', namespace: 'default' }, ns, []],
    ['no name', { namespace: 'default' }, ns, ['metadata.name: Required value: name or generateName is required']],
    ['generateName only on create', { generateName: 'web-', namespace: 'default' }, ns, []],
    ['generateName does not name an update', { generateName: 'web-', namespace: 'default' }, { ...ns, isCreate: false },
      ['metadata.name: Required value: name or generateName is required']],
    ['bad generateName', { generateName: 'Web_', namespace: 'default' }, ns, [`metadata.generateName: Invalid value: "Web_": ${subdomainMsg}`]],
    ['bad name', { name: 'Foo_bar', namespace: 'default' }, ns, [`metadata.name: Invalid value: "Foo_bar": ${subdomainMsg}`]],
    ['label rule', { name: 'a.b' }, { namespaced: false, isCreate: true, nameValidation: 'label' }, [`metadata.name: Invalid value: "a.b": ${labelMsg}`]],
    ['missing namespace', { name: 'a' }, ns, ['metadata.namespace: Required value']],
    ['namespace on cluster kind', { name: 'a', namespace: 'x' }, { namespaced: false, isCreate: true }, ['metadata.namespace: Forbidden: not allowed on this type']],
    ['negative generation', { name: 'a', namespace: 'd', generation: -1 }, ns, ['metadata.generation: Invalid value: -1: must be greater than or equal to 0']],
    ['bad finalizer', { name: 'a', namespace: 'd', finalizers: ['a/b/c'] }, ns, [/^metadata\.finalizers: Invalid value: "a\/b\/c": a qualified name/.source]],
    ['owner reference without uid', { name: 'a', namespace: 'd', ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'r' }] }, ns,
      ['metadata.ownerReferences[0].uid: Invalid value: "": uid must not be empty']],
  ]
  for (const [name, meta, opts, want] of cases) {
    const got = validateObjectMeta(meta, opts).map((e) => `${e.field}: ${e.message}`)
    if (want.length === 1 && want[0].startsWith('^')) t.match(got, [new RegExp(want[0])], name)
    else t.same(got, want, name)
  }
})

t.test('update may not change identity fields', async (t) => {
  const old = { name: 'a', namespace: 'd', uid: 'u1', creationTimestamp: '2024-01-01T00:00:00Z' }
  t.same(validateObjectMetaUpdate({ ...old, labels: { a: 'b' } }, old), [])
  t.same(validateObjectMetaUpdate({ ...old, uid: 'u2' }, old).map((e) => `${e.field}: ${e.message}`), ['metadata.uid: Invalid value: "u2": field is immutable'])
})
