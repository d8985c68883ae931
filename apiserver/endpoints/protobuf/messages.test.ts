import t from 'tap'
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { Messages, messageName } from './messages.js'

t.test('the field table is read on the first lookup, not when the module loads', async t => {
  // A fresh process: this file's own process has already looked messages up.
  const out = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', `
    const { createRequire } = await import('node:module')
    const cache = createRequire(import.meta.url).cache
    const loaded = () => Object.keys(cache).some(f => f.endsWith('fields.json'))
    const m = await import(${JSON.stringify(new URL('./messages.ts', import.meta.url).href)})
    const before = loaded()
    const pod = m.messageName('v1', 'Pod')
    console.log(JSON.stringify({ before, after: loaded(), pod }))`], { encoding: 'utf8' })
  t.same(JSON.parse(out.trim().split('\n').pop()!), { before: false, after: true, pod: 'k8s.io.api.core.v1.Pod' })
})

t.test('every message of the file, and only those, is found, with all its fields', async t => {
  const file = JSON.parse(readFileSync(new URL('../../../proto/k8s-v1.29/fields.json', import.meta.url), 'utf8')) as Record<string, Record<string, { id: number }>>
  const messages = new Messages()
  for (const [name, fields] of Object.entries(file)) {
    const info = messages.get(name)
    if (info === undefined) { t.fail(`${name} not found`); continue }
    t.same([...info.byId.keys()].sort((a, b) => a - b), Object.values(fields).map(f => f.id).sort((a, b) => a - b), name)
  }
  t.equal(messages.get('k8s.io.api.core.v1.NoSuchKind'), undefined)
  t.equal(messageName('apps/v1', 'Deployment'), 'k8s.io.api.apps.v1.Deployment')
  t.equal(messageName('v1', 'Status'), 'k8s.io.apimachinery.pkg.apis.meta.v1.Status')
  t.equal(messageName('v1', 'NoSuchKind'), undefined)
})
