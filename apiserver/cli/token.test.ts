// `orch admin token create`: the tokens and Secrets it makes, and its usage errors (checked before connecting).
import t from 'tap'
import { main } from './main.js'
import { bootstrapTokenSecret, generateBootstrapToken } from './token.js'
import { parseBootstrapToken } from '../auth/bootstrap-tokens.js'

function io (): { text: () => string, io: { out: (s: string) => void, err: (s: string) => void } } {
  const all: string[] = []
  return { text: () => all.join(''), io: { out: s => { all.push(s) }, err: s => { all.push(s) } } }
}

t.test('generated tokens have the bootstrap token form and differ', async t => {
  const a = generateBootstrapToken()
  const b = generateBootstrapToken()
  t.same(parseBootstrapToken(a.token), [a.id, a.secret])
  t.not(a.token, b.token)
})

t.test('the Secret is a kube-system bootstrap token Secret named after the id', async t => {
  const s = bootstrapTokenSecret('abcdef', '0123456789abcdef', { expiresAt: new Date('2026-01-02T03:04:05.678Z'), groups: ['system:bootstrappers:a'], description: 'd' })
  t.same(s, {
    apiVersion: 'v1', kind: 'Secret', type: 'bootstrap.kubernetes.io/token',
    metadata: { name: 'bootstrap-token-abcdef', namespace: 'kube-system' },
    stringData: {
      'token-id': 'abcdef', 'token-secret': '0123456789abcdef', 'usage-bootstrap-authentication': 'true', 'usage-bootstrap-signing': 'true',
      expiration: '2026-01-02T03:04:05Z', 'auth-extra-groups': 'system:bootstrappers:a', description: 'd'
    }
  })
})

t.test('usage errors exit 2 before anything connects', async t => {
  for (const [argv, want] of [
    [['admin', 'token'], /orch admin token needs a command: create/],
    [['admin', 'token', 'list'], /unknown token command "list"/],
    [['admin', 'token', 'create', '--groups', 'admins'], /--groups: bootstrap group "admins" is invalid/],
    [['admin', 'token', 'create', '--ttl', 'soon'], /invalid value "soon" for --ttl/]
  ] as Array<[string[], RegExp]>) {
    const r = io()
    t.equal(await main(argv, r.io), 2, argv.join(' '))
    t.match(r.text(), want)
  }
  const missing = io()
  t.equal(await main(['admin', 'token', 'create', '--kubeconfig', '/nonexistent/kubeconfig'], missing.io), 1, 'no kubeconfig: exit 1')
  t.match(missing.text(), /invalid connection file \/nonexistent\/kubeconfig/)
})
