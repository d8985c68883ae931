// Turning the audit options into a running auditor: the policy file read and checked, the log opened (both at start).

import type { Logger } from 'pino'
import { Auditor, type AuditorOptions } from './auditor.js'
import { openLogBackend } from './log-backend.js'
import { loadPolicyFile } from './policy.js'
import type { RotationOptions } from './rotating-file.js'

export interface AuditSetup {
  policyFile?: string
  logPath?: string
  rotation: RotationOptions
  /** `--audit-log-version`. */
  eventApiVersion?: string
}

/**
 * The auditor for `--audit-policy-file` and `--audit-log-path`, or undefined when either is missing (as in Kubernetes,
 * which records nothing then; the reason is logged). Throws PolicyError for a bad policy and the file system's error for
 * a log that cannot be created: the server should not start.
 */
export async function openAuditor (setup: AuditSetup, logger: Logger, extra: Omit<AuditorOptions, 'policy' | 'sink'> = {}): Promise<Auditor | undefined> {
  if (setup.policyFile === undefined) {
    if (setup.logPath !== undefined) logger.warn('no audit policy file provided; no events will be recorded for the log backend')
    return undefined
  }
  const policy = await loadPolicyFile(setup.policyFile)
  if (setup.logPath === undefined) {
    logger.warn('an audit policy file is given without --audit-log-path; no events will be recorded')
    return undefined
  }
  const sink = await openLogBackend(setup.logPath, setup.rotation, logger.child({ component: 'audit' }), extra.now)
  return new Auditor({ eventApiVersion: setup.eventApiVersion, ...extra, policy, sink })
}
