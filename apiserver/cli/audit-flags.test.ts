// The audit flags of orch up / orch apiserver.
import t from 'tap'
import { parseFlags, UsageError } from './args.js'
import { AUDIT_FLAGS, auditOptions } from './audit-flags.js'

t.test('the audit flags parse into options, with lumberjack-style defaults', async t => {
  t.same(auditOptions(parseFlags([], AUDIT_FLAGS).flags), { eventApiVersion: 'audit.orch.io/v1', policyFile: undefined, logPath: undefined, rotation: { maxAgeDays: 0, maxBackups: 0, maxSizeMB: 0, compress: false } })
  const { flags } = parseFlags(['--audit-policy-file', '/etc/p.yaml', '--audit-log-path=-', '--audit-log-maxage', '7', '--audit-log-maxbackup=3', '--audit-log-maxsize', '50', '--audit-log-compress', '--audit-log-version=audit.k8s.io/v1'], AUDIT_FLAGS)
  t.same(auditOptions(flags), { eventApiVersion: 'audit.k8s.io/v1', policyFile: '/etc/p.yaml', logPath: '-', rotation: { maxAgeDays: 7, maxBackups: 3, maxSizeMB: 50, compress: true } })
})

t.test('bad numbers are usage errors', async t => {
  t.throws(() => parseFlags(['--audit-log-maxage', '-1'], AUDIT_FLAGS), UsageError)
  t.throws(() => auditOptions({ 'audit-log-version': 'audit.k8s.io/v1beta1' }), { name: 'UsageError', message: /--audit-log-version: want audit.orch.io\/v1 or audit.k8s.io\/v1/ })
  t.throws(() => auditOptions({ 'audit-log-maxsize': -5 }), { name: 'UsageError', message: "--audit-log-maxsize -5 can't be a negative number" })
})
