// Audit policy files: both API groups, YAML and JSON, and validation errors that name the field.
import t from 'tap'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadPolicyFile, parsePolicy, PolicyError } from './policy.js'

const head = 'apiVersion: audit.orch.io/v1\nkind: Policy\n'

t.test('a policy in either group decodes, with defaults for what is left out', async t => {
  for (const apiVersion of ['audit.orch.io/v1', 'audit.k8s.io/v1']) {
    const p = parsePolicy(`apiVersion: ${apiVersion}\nkind: Policy\nomitStages: [RequestReceived]\nrules:\n- level: Metadata\n  resources:\n  - group: ""\n    resources: ["pods/log"]\n`)
    t.same(p, {
      omitStages: ['RequestReceived'],
      omitManagedFields: false,
      rules: [{ level: 'Metadata', users: [], userGroups: [], verbs: [], resources: [{ group: '', resources: ['pods/log'], resourceNames: [] }], namespaces: [], nonResourceURLs: [], omitStages: [] }]
    }, apiVersion)
  }
})

t.test('JSON policies decode too', async t => {
  const p = parsePolicy(JSON.stringify({ apiVersion: 'audit.k8s.io/v1', kind: 'Policy', omitManagedFields: true, rules: [{ level: 'None', omitManagedFields: false }] }))
  t.equal(p.omitManagedFields, true)
  t.equal(p.rules[0].omitManagedFields, false)
})

const invalid: Array<[string, string, RegExp]> = [
  ['missing level', 'rules:\n- verbs: [get]\n', /rules\[0\]\.level: Required value/],
  ['unknown level', 'rules:\n- level: Everything\n', /rules\[0\]\.level: Unsupported value: "Everything": supported values: "None", "Metadata", "Request", "RequestResponse"/],
  ['rule stage', 'rules:\n- level: None\n  omitStages: [Started]\n', /rules\[0\]\.omitStages\[0\]: Invalid value: "Started": allowed stages are RequestReceived,ResponseStarted,ResponseComplete,Panic/],
  ['top-level stage', 'omitStages: [Nope]\nrules:\n- level: None\n', /omitStages\[0\]: Invalid value: "Nope"/],
  ['URL without slash', 'rules:\n- level: None\n  nonResourceURLs: ["healthz"]\n', /rules\[0\]\.nonResourceURLs\[0\]: Invalid value: "healthz": non-resource URL rules must begin with a '\/' character/],
  ['inner wildcard', 'rules:\n- level: None\n  nonResourceURLs: ["/api/*/x"]\n', /rules\[0\]\.nonResourceURLs\[0\]: Invalid value: "\/api\/\*\/x": non-resource URL wildcards '\*' must be the final character of the rule/],
  ['resources and URLs', 'rules:\n- level: None\n  nonResourceURLs: ["/x"]\n  namespaces: [a]\n', /rules\[0\]\.nonResourceURLs: .*rules cannot apply to both regular resources and non-resource URLs/],
  ['group with a version', 'rules:\n- level: None\n  resources:\n  - group: rbac.authorization.k8s.io/v1\n', /rules\[0\]\.resources\[0\]\.group: Invalid value: "rbac.authorization.k8s.io\/v1"/],
  ['names without resources', 'rules:\n- level: None\n  resources:\n  - group: ""\n    resourceNames: [a]\n', /rules\[0\]\.resources\[0\]\.resourceNames: .*using resourceNames requires at least one resource/],
  ['misspelt selector', 'rules:\n- level: None\n  resource: [pods]\n', /rules\[0\]\.resource: unknown field/],
  ['string for a list', 'rules:\n- level: None\n  users: alice\n', /rules\[0\]\.users: Invalid value: "alice": must be a list of strings/],
  ['non-boolean', 'rules:\n- level: None\n  omitManagedFields: "yes"\n', /rules\[0\]\.omitManagedFields: Invalid value: "yes": must be true or false/]
]

t.test('invalid policies are refused naming the field', async t => {
  for (const [what, body, want] of invalid) {
    t.throws(() => parsePolicy(head + body, 'file "p.yaml"'), { name: 'PolicyError', message: want }, what)
  }
})

t.test('every problem is reported at once', async t => {
  t.throws(() => parsePolicy(head + 'rules:\n- level: X\n- verbs: [get]\n'), { message: /^loaded illegal policy from policy: \[rules\[0\]\.level: .*, rules\[1\]\.level: Required value\]$/ })
})

t.test('a policy without rules, another kind or version, or unparseable text is refused', async t => {
  t.throws(() => parsePolicy(head + 'rules: []\n', 'file "p"'), { message: 'loaded illegal policy with 0 rules from file "p"' })
  t.throws(() => parsePolicy('apiVersion: audit.k8s.io/v1beta1\nkind: Policy\nrules:\n- level: None\n'), { message: /apiVersion "audit.k8s.io\/v1beta1" is not supported/ })
  t.throws(() => parsePolicy('apiVersion: audit.orch.io/v1\nkind: Event\n'), { message: /kind "Event" is not supported: want Policy/ })
  t.throws(() => parsePolicy('rules: [\n'), PolicyError)
  t.throws(() => parsePolicy(''), { message: /the file is empty/ })
})

t.test('loadPolicyFile reads a file and names it in errors', async t => {
  const dir = mkdtempSync(join(tmpdir(), 'orch-policy-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const f = join(dir, 'p.yaml')
  writeFileSync(f, head + 'rules:\n- level: Request\n')
  t.equal((await loadPolicyFile(f)).rules[0].level, 'Request')
  await t.rejects(loadPolicyFile(join(dir, 'missing.yaml')), { message: /failed to read audit policy file ".*missing.yaml"/ })
  writeFileSync(f, head + 'rules:\n- level: Bad\n')
  await t.rejects(loadPolicyFile(f), { message: /loaded illegal policy from file ".*p.yaml": rules\[0\]\.level/ })
})
