import t from 'tap'
import { main } from './main.js'
import { parseFlags } from './args.js'
import { kubeconfigYaml } from './kubeconfig.js'

function io () {
  const out: string[] = []
  const err: string[] = []
  return { out, err, io: { out: (s: string) => { out.push(s) }, err: (s: string) => { err.push(s) } } }
}

t.test('prints help and version', async t => {
  const h = io()
  t.equal(await main(['--help'], h.io), 0)
  t.match(h.out.join(''), /orch up \[flags\]/)
  t.match(h.out.join(''), /--data-dir VALUE/)
  const v = io()
  t.equal(await main(['version'], v.io), 0)
  t.match(v.out.join(''), /^orch v1\.29\.0-orch/)
})

t.test('rejects unknown commands and flags with exit code 2', async t => {
  for (const argv of [['nope'], ['up', '--colour'], ['up', '--port', 'x'], ['up', '--port'], ['up', '--port', '70000'], ['up', 'extra']]) {
    const r = io()
    t.equal(await main(argv, r.io), 2, argv.join(' '))
    t.match(r.err.join(''), /^orch: /)
  }
})

t.test('parses flags in both spellings with defaults', async t => {
  const specs = [{ name: 'port', kind: 'int' as const, help: '', default: 6443 }, { name: 'data-dir', kind: 'string' as const, help: '' }]
  t.same(parseFlags(['--port=0', '--data-dir', 'x'], specs).flags, { port: 0, 'data-dir': 'x' })
  t.same(parseFlags([], specs).flags, { port: 6443, 'data-dir': undefined })
  t.throws(() => parseFlags(['--nope'], specs), { code: 'ORCH_ERR_USAGE', name: 'UsageError' })
})

t.test('writes a kubeconfig with context orch and no credentials', async t => {
  const y = kubeconfigYaml('http://127.0.0.1:1234')
  t.match(y, /server: http:\/\/127\.0\.0\.1:1234/)
  t.match(y, /current-context: orch/)
  t.notMatch(y, /token|password|client-key/)
})

t.test('bad logging flags are usage errors naming the flag', async t => {
  const cases: Array<[string[], RegExp]> = [
    [['apiserver', '--logging-format', 'xml'], /invalid --logging-format "xml": want text or json/],
    [['scheduler', '--kubeconfig', '/nonexistent', '--vmodule', 'sched'], /invalid --vmodule entry "sched": want pattern=N/],
    [['apiserver', '--logging-format=json', '--vmodule=a=1'], /--vmodule works only with the text format/],
    [['up', '-v', 'x'], /invalid value "x" for --v/]
  ]
  for (const [argv, message] of cases) {
    const r = io()
    t.equal(await main(argv, r.io), 2, argv.join(' '))
    t.match(r.err.join(''), message)
  }
})

t.test('orch up refuses a bad --controller-manager-config with one line before starting', async t => {
  const { mkdtempSync, writeFileSync } = await import('node:fs')
  const { join } = await import('node:path')
  const { tmpdir } = await import('node:os')
  const dir = mkdtempSync(join(tmpdir(), 'orch-cm-config-'))
  const file = join(dir, 'cm.yaml')
  writeFileSync(file, 'apiVersion: orchcontrollermanager.config.orch.io/v1alpha1\nkind: OrchControllerManagerConfiguration\nGeneric: {Controllers: 5}\n')
  const r = io()
  t.equal(await main(['up', '--data-dir', join(dir, 'data'), '--port', '0', '--controller-manager-config', file], r.io), 1)
  t.equal(r.err.join('').trim().split('\n').length, 1)
  t.match(r.err.join(''), file)
})
