// Starting audit from its options: on only with a policy and a log, bad policies and paths fail at start.
import t from 'tap'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pino } from 'pino'
import { openAuditor } from './open.js'

const rotation = { maxAgeDays: 0, maxBackups: 0, maxSizeMB: 0 }
const logger = pino({ level: 'silent' })

t.test('auditing needs both a policy file and a log path', async t => {
  const dir = mkdtempSync(join(tmpdir(), 'orch-open-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const policy = join(dir, 'p.yaml')
  writeFileSync(policy, 'apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n')
  t.equal(await openAuditor({ rotation }, logger), undefined)
  t.equal(await openAuditor({ logPath: join(dir, 'a.log'), rotation }, logger), undefined)
  t.equal(await openAuditor({ policyFile: policy, rotation }, logger), undefined)
  const a = await openAuditor({ policyFile: policy, logPath: join(dir, 'a.log'), rotation }, logger)
  t.ok(a)
  await a?.close()
  t.equal(readFileSync(join(dir, 'a.log'), 'utf8'), '')
})

t.test('a bad policy or an unwritable log path fails at start', async t => {
  const dir = mkdtempSync(join(tmpdir(), 'orch-open-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const bad = join(dir, 'bad.yaml')
  writeFileSync(bad, 'apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Loud\n')
  await t.rejects(openAuditor({ policyFile: bad, logPath: join(dir, 'a.log'), rotation }, logger), { name: 'PolicyError', message: /rules\[0\]\.level: Unsupported value: "Loud"/ })
  const good = join(dir, 'good.yaml')
  writeFileSync(good, 'apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n')
  writeFileSync(join(dir, 'file'), '')
  await t.rejects(openAuditor({ policyFile: good, logPath: join(dir, 'file', 'a.log'), rotation }, logger), { code: /^(ENOTDIR|EEXIST)$/ })
})
