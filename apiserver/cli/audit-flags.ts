// The audit flags of `orch up` / `orch apiserver` (policy file, log path, rotation), parsed before serving.

import { EVENT_API_VERSION, EVENT_API_VERSIONS } from '../audit/event.js'
import type { RotationOptions } from '../audit/rotating-file.js'
import { UsageError, type FlagSpec, type Flags } from './args.js'

export const AUDIT_FLAGS: FlagSpec[] = [
  { name: 'audit-policy-file', kind: 'string', help: 'audit policy (audit.orch.io/v1 or audit.k8s.io/v1 Policy, YAML or JSON); without it nothing is audited' },
  { name: 'audit-log-path', kind: 'string', help: 'write audit events to this file as JSON lines (- for standard output); without it nothing is audited' },
  { name: 'audit-log-maxage', kind: 'int', help: 'days to keep rotated audit log files (by the time in their names); 0 keeps them', default: 0 },
  { name: 'audit-log-maxbackup', kind: 'int', help: 'rotated audit log files to keep; 0 keeps them all', default: 0 },
  { name: 'audit-log-maxsize', kind: 'int', help: 'megabytes the audit log reaches before it is rotated; 0 for the default of 100', default: 0 },
  { name: 'audit-log-compress', kind: 'bool', help: 'gzip rotated audit log files', default: false },
  { name: 'audit-log-version', kind: 'string', help: `apiVersion of the events written: ${EVENT_API_VERSIONS.join(' or ')}`, default: EVENT_API_VERSION }
]

export interface AuditOptions {
  policyFile?: string
  /** A file, or `-` for standard output. */
  logPath?: string
  rotation: RotationOptions
  eventApiVersion: string
}

const str = (v: unknown): string | undefined => typeof v === 'string' && v !== '' ? v : undefined

function count (flags: Flags, name: string): number {
  const v = flags[name] ?? 0
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0) throw new UsageError(`--${name} ${String(v)} can't be a negative number`)
  return v
}

/** The audit options; auditing is on only when both the policy file and the log path are given (see openAuditor). */
export function auditOptions (flags: Flags): AuditOptions {
  const eventApiVersion = str(flags['audit-log-version']) ?? EVENT_API_VERSION
  if (!EVENT_API_VERSIONS.includes(eventApiVersion)) {
    throw new UsageError(`invalid value "${eventApiVersion}" for --audit-log-version: want ${EVENT_API_VERSIONS.join(' or ')}`)
  }
  return {
    eventApiVersion,
    policyFile: str(flags['audit-policy-file']),
    logPath: str(flags['audit-log-path']),
    rotation: {
      maxAgeDays: count(flags, 'audit-log-maxage'),
      maxBackups: count(flags, 'audit-log-maxbackup'),
      maxSizeMB: count(flags, 'audit-log-maxsize'),
      compress: flags['audit-log-compress'] === true
    }
  }
}
