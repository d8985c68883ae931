// csrapproving: approves an orchlet's client certificate request when its requester may have it approved, as
// kube-controller-manager's csrapproving (the SubjectAccessReview approver) does: a node renewing its own
// certificate (selfnodeclient) or a bootstrapping orchlet (nodeclient). The check is an injected Authorizer.

import { QueueController, type ControllerContext, type ReconcileResult } from '../controller.js'
import { RESOURCES, type Obj } from '../client/types.js'
import type { SharedInformer } from '../informer.js'
import { resourceAttributes, type Authorizer, type UserInfo } from '../../auth/types.js'
import { CsrError, parseCsr, type ParsedCsr } from '../../pki/csr.js'
import { APISERVER_CLIENT_ORCHLET, isOrchletClientCsr } from './signer-rules.js'
import { hasTrueCondition } from './csr-signing.js'

interface Recognizer {
  /** The subresource of certificatesigningrequests the requester needs `create` on. */
  permission: 'selfnodeclient' | 'nodeclient'
  recognize(csr: Obj, parsed: ParsedCsr): boolean
  message: string
}

const isNodeClient = (csr: Obj, parsed: ParsedCsr): boolean =>
  csr.spec?.signerName === APISERVER_CLIENT_ORCHLET && isOrchletClientCsr(parsed, (csr.spec?.usages ?? []) as string[])

const RECOGNIZERS: Recognizer[] = [
  {
    permission: 'selfnodeclient',
    recognize: (csr, parsed) => csr.spec?.username === parsed.commonName && isNodeClient(csr, parsed),
    message: 'Auto approving self orchlet client certificate after SubjectAccessReview.'
  },
  { permission: 'nodeclient', recognize: isNodeClient, message: 'Auto approving orchlet client certificate after SubjectAccessReview.' }
]

/** A request recognized but not allowed is looked at again later (RBAC may change). */
const RECHECK_MS = 60_000

/**
 * The default policy while no RBAC authorizer is plugged in, matching the bindings kubeadm makes: members of
 * system:bootstrappers may get node client certificates approved, members of system:nodes their own renewals.
 */
export const bootstrapApprovalPolicy: Authorizer = {
  async authorize (a) {
    const sub = a.resource === 'certificatesigningrequests' && a.verb === 'create' ? a.subresource : ''
    const ok = (sub === 'nodeclient' && a.user.groups.includes('system:bootstrappers')) ||
      (sub === 'selfnodeclient' && a.user.groups.includes('system:nodes'))
    return ok ? { decision: 'allow', reason: '' } : { decision: 'noOpinion', reason: '' }
  }
}

/** The requester as the CSR recorded it (spec.username, uid, groups, extra). */
export function requesterOf (csr: Obj): UserInfo {
  const spec = csr.spec ?? {}
  const user: UserInfo = { username: String(spec.username ?? ''), groups: [...(spec.groups ?? []) as string[]] }
  if (typeof spec.uid === 'string' && spec.uid !== '') user.uid = spec.uid
  if (spec.extra !== undefined) user.extra = structuredClone(spec.extra)
  return user
}

export class CsrApprovingController extends QueueController {
  private readonly csrs: SharedInformer

  constructor (c: ControllerContext, private readonly authorizer: Authorizer = bootstrapApprovalPolicy) {
    super('csrapproving', c)
    this.csrs = c.informers.informer(RESOURCES.certificateSigningRequests)
  }

  protected watch (): void {
    const enqueue = (o: Obj): void => this.queue.add(String(o.metadata.name))
    this.csrs.addEventHandler({ add: enqueue, update: (_old, cur) => enqueue(cur) })
  }

  async reconcile (name: string): Promise<ReconcileResult | void> {
    const csr = this.csrs.get(name)
    if (csr === undefined || (csr.status?.certificate ?? '') !== '') return
    if (hasTrueCondition(csr, 'Approved') || hasTrueCondition(csr, 'Denied')) return
    let parsed: ParsedCsr
    try {
      parsed = parseCsr(Buffer.from(String(csr.spec?.request ?? ''), 'base64'))
    } catch (err) {
      if (err instanceof CsrError) return
      throw err
    }
    let tried = false
    for (const r of RECOGNIZERS) {
      if (!r.recognize(csr, parsed)) continue
      tried = true
      const attrs = resourceAttributes(requesterOf(csr), {
        verb: 'create', apiGroup: 'certificates.k8s.io', apiVersion: '*', resource: 'certificatesigningrequests', subresource: r.permission
      })
      if ((await this.authorizer.authorize(attrs)).decision !== 'allow') continue
      const next = structuredClone(csr)
      next.status ??= {}
      next.status.conditions = [...(next.status.conditions ?? []), { type: 'Approved', status: 'True', reason: 'AutoApproved', message: r.message }]
      await this.c.client.resource(RESOURCES.certificateSigningRequests).update('', next, 'approval')
      return
    }
    if (tried) {
      this.c.logger.debug({ csr: name }, 'recognized an orchlet client csr but the requester may not have it approved')
      return { requeueAfterMs: RECHECK_MS }
    }
  }
}
