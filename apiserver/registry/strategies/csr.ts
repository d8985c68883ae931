// The CertificateSigningRequest strategy: the requester is recorded from the request's user, never from the body;
// each write path changes only its part (main: metadata; /status: status but not approval; /approval: conditions).
// Creation also runs Kubernetes' CertificateSubjectRestriction admission: no system:masters certificates through the
// API server client signer. Given a SignerPermission, approval and signing run the CertificateApproval and
// CertificateSigning admission checks: `approve` resp. `sign` on the request's signer (certificates.k8s.io signers).

import type { Strategy, StrategyContext } from '../strategy.js'
import type { Obj } from '../object-meta.js'
import type { UserInfo } from '../types.js'
import { APPROVED, DENIED, certificateOf, conditionsOf, validateCsr, validateCsrUpdate, type CsrCondition } from './csr-validation.js'
import { fieldPathValue } from '../selectors.js'
import { forbidden } from '../../errors/status-error.js'
import { parseCsr } from '../../pki/csr.js'
import { requestBytes } from './csr-validation.js'

const APISERVER_CLIENT_SIGNER = 'orch.io/orch-apiserver-client'

/** Whether `user` may `approve` requests of, or `sign` certificates for, `signerName` (an authorizer's answer). */
export type SignerPermission = (user: UserInfo, verb: 'approve' | 'sign', signerName: string) => Promise<boolean>

/** metav1.Time as the API writes it: RFC 3339, whole seconds. */
const rfc3339 = (ms: number): string => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z')

function statusOf (csr: Obj): Obj {
  if (csr.status === null || typeof csr.status !== 'object') csr.status = {}
  return csr.status as Obj
}

/** The new object's conditions of `type` replaced by the stored ones: /status cannot approve or deny. */
function preserveConditions (csr: Obj, old: Obj, type: string): void {
  const kept = conditionsOf(csr).filter(c => c.type !== type)
  const conditions = [...kept, ...conditionsOf(old).filter(c => c.type === type)]
  if (conditions.length > 0) statusOf(csr).conditions = conditions
  else if (csr.status !== undefined) delete (csr.status as Obj).conditions
}

/** Missing lastUpdateTime is now; a missing lastTransitionTime keeps the stored one of the same type and status. */
function stampConditions (csr: Obj, old: Obj, now: number): void {
  const conditions = conditionsOf(csr)
  if (conditions.length === 0) return
  for (const c of conditions as CsrCondition[]) {
    c.lastUpdateTime ??= rfc3339(now)
    if (c.lastTransitionTime === undefined) {
      const same = conditionsOf(old).find(o => o.type === c.type && o.status === c.status && o.lastTransitionTime !== undefined)
      c.lastTransitionTime = same?.lastTransitionTime ?? rfc3339(now)
    }
  }
}

function recordRequester (csr: Obj, sc: StrategyContext): void {
  const spec = (csr.spec ?? {}) as Obj
  delete spec.username
  delete spec.uid
  delete spec.groups
  delete spec.extra
  const user = sc.ctx.user
  spec.username = user.username
  if (user.uid !== undefined && user.uid !== '') spec.uid = user.uid
  if (user.groups.length > 0) spec.groups = [...user.groups]
  if (user.extra !== undefined && Object.keys(user.extra).length > 0) {
    spec.extra = Object.fromEntries(Object.entries(user.extra).map(([k, v]) => [k, [...v]]))
  }
  csr.spec = spec
}

/** The strategy of CertificateSigningRequests served in `group` (certificates.orch.io or its upstream alias). */
/** `off`: admission plugins disabled by name (CertificateApproval, CertificateSigning, CertificateSubjectRestriction). */
export const createCsrStrategy = (group: string, mayActOnSigner?: SignerPermission, off: ReadonlySet<string> = new Set()): Strategy => ({
  fieldLabels: { 'spec.signerName': o => fieldPathValue(o, 'spec.signerName') },
  prepareForCreate (csr, sc) {
    recordRequester(csr, sc)
    // Users cannot create pre-approved (or pre-signed) requests.
    csr.status = {}
  },
  async prepareForUpdate (csr, old, sc) {
    csr.spec = structuredClone(old.spec)
    if (sc.subresource === 'status') {
      preserveConditions(csr, old, APPROVED)
      preserveConditions(csr, old, DENIED)
    } else if (sc.subresource === 'approval') {
      const conditions = conditionsOf(csr)
      csr.status = { ...structuredClone((old.status ?? {}) as Obj), conditions }
      if (conditions.length === 0) delete (csr.status as Obj).conditions
    } else if (old.status === undefined) {
      delete csr.status
    } else {
      csr.status = structuredClone(old.status)
    }
    stampConditions(csr, old, sc.now)
    if (mayActOnSigner === undefined) return
    const signer = String((old.spec as Obj | undefined)?.signerName ?? '')
    const verb = sc.subresource === 'approval' ? (off.has('CertificateApproval') ? undefined : 'approve')
      : sc.subresource === 'status' && certificateOf(csr) !== certificateOf(old) && !off.has('CertificateSigning') ? 'sign' : undefined
    if (verb !== undefined && !await mayActOnSigner(sc.ctx.user, verb, signer)) {
      throw forbidden({ group, resource: 'certificatesigningrequests' }, String((csr.metadata as Obj | undefined)?.name ?? ''),
        `user not permitted to ${verb} requests with signerName ${JSON.stringify(signer)}`)
    }
  },
  validate: validateCsr,
  validateUpdate: (csr, old) => validateCsrUpdate(csr, old),
  admitCreate (csr) {
    if (off.has('CertificateSubjectRestriction')) return
    const spec = (csr.spec ?? {}) as Obj
    if (spec.signerName !== APISERVER_CLIENT_SIGNER) return
    if (!parseCsr(requestBytes(csr)).organizations.includes('system:masters')) return
    throw forbidden({ group, resource: 'certificatesigningrequests' }, String((csr.metadata as Obj | undefined)?.name ?? ''),
      `use of ${APISERVER_CLIENT_SIGNER} signer with system:masters group is not allowed`)
  }
})
