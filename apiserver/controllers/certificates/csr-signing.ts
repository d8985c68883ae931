// csrsigning: signs approved CertificateSigningRequests of the built-in signers with the cluster CA, as
// kube-controller-manager's csrsigning controller; a request that breaks its signer's rules gets a Failed condition.

import { QueueController, type ControllerContext, type ReconcileResult } from '../controller.js'
import { RESOURCES, type Obj } from '../client/types.js'
import type { SharedInformer } from '../informer.js'
import type { CertificateAuthority } from '../../pki/certs.js'
import { CsrError, parseCsr, signCsr } from '../../pki/csr.js'
import { DEFAULT_SIGNING_DURATION_MS, signerVerdict, validityFor } from './signer-rules.js'
import type { ControllerSettings } from '../controller.js'

const rfc3339 = (ms: number): string => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z')

export const hasTrueCondition = (csr: Obj, type: string): boolean =>
  ((csr.status?.conditions ?? []) as Obj[]).some(c => c.type === type && c.status === 'True')

export class CsrSigningController extends QueueController {
  private readonly csrs: SharedInformer
  private readonly durationMs: number

  constructor (c: ControllerContext, private readonly signing: NonNullable<ControllerSettings['csrSigning']>) {
    super('csrsigning', c)
    this.csrs = c.informers.informer(RESOURCES.certificateSigningRequests)
    this.durationMs = signing.durationMs ?? DEFAULT_SIGNING_DURATION_MS
  }

  /** The CA of `signerName`: its own, else the cluster signing CA. */
  private caFor (signerName: string): CertificateAuthority | undefined {
    return this.signing.signers?.[signerName] ?? this.signing.ca
  }

  protected watch (): void {
    const enqueue = (o: Obj): void => this.queue.add(String(o.metadata.name))
    this.csrs.addEventHandler({ add: enqueue, update: (_old, cur) => enqueue(cur) })
  }

  async reconcile (name: string): Promise<ReconcileResult | void> {
    const cached = this.csrs.get(name)
    if (cached === undefined || (cached.status?.certificate ?? '') !== '') return
    if (!hasTrueCondition(cached, 'Approved') || hasTrueCondition(cached, 'Failed')) return
    const spec = cached.spec ?? {}
    let csr
    try {
      csr = parseCsr(Buffer.from(String(spec.request ?? ''), 'base64'))
    } catch (err) {
      // Validation let it in, so this cannot be fixed by retrying.
      if (err instanceof CsrError) { this.c.logger.warn({ csr: name, err }, 'unable to parse csr'); return }
      throw err
    }
    const usages = (spec.usages ?? []) as string[]
    const signerName = String(spec.signerName ?? '')
    const verdict = signerVerdict(signerName, csr, usages)
    const ca = this.caFor(signerName)
    if (verdict === undefined || ca === undefined) return
    const next = structuredClone(cached)
    next.status ??= {}
    if (verdict.problem !== undefined) {
      next.status.conditions = [...(next.status.conditions ?? []), {
        type: 'Failed', status: 'True', reason: 'SignerValidationFailure', message: verdict.problem, lastUpdateTime: rfc3339(this.c.clock.now())
      }]
    } else {
      const validity = validityFor(this.c.clock.now(), this.durationMs, spec.expirationSeconds as number | undefined, ca.cert.notAfter)
      const pem = await signCsr(ca, csr, { usages, ...validity })
      next.status.certificate = Buffer.from(pem).toString('base64')
    }
    try {
      await this.c.client.resource(RESOURCES.certificateSigningRequests).update('', next, 'status')
    } catch (err) {
      if ((err as { code?: number }).code !== 404) throw err
    }
  }
}
