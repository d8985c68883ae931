// CertificateSigningRequest validation (certificates/v1), with Kubernetes' field paths and wording: the request is a
// PEM CERTIFICATE REQUEST whose signature verifies, known and unique usages, a qualified signer name (not the legacy
// one), expirationSeconds >= 600, consistent conditions; on update, no condition of type Approved, Denied or Failed
// removed and a certificate set once, valid PEM, and only on an approved request.

import type { FieldError } from '../../schema/types.js'
import { duplicate, forbidden, invalid, notSupported, required, tooLongBytes } from '../../schema/field-errors.js'
import { isDNS1123Label, isDNS1123Subdomain } from '../../schema/metadata.js'
import { CsrError, parseAndVerifyCsr } from '../../pki/csr.js'
import { isValidUsage, VALID_USAGES } from '../../pki/key-usages.js'
import type { Obj } from '../object-meta.js'

export const LEGACY_UNKNOWN_SIGNER = 'orch.io/legacy-unknown'
export const APPROVED = 'Approved'
export const DENIED = 'Denied'
export const FAILED = 'Failed'

const TRUE_ONLY_TYPES = new Set([APPROVED, DENIED, FAILED])
const ALL_STATUSES = ['False', 'True', 'Unknown']

export interface CsrCondition { type?: string; status?: string; reason?: string; message?: string; lastUpdateTime?: string; lastTransitionTime?: string }

export const specOf = (csr: Obj): Obj => (csr.spec ?? {}) as Obj
export const conditionsOf = (csr: Obj): CsrCondition[] => ((csr.status as Obj | undefined)?.conditions ?? []) as CsrCondition[]
export const certificateOf = (csr: Obj): string => String((csr.status as Obj | undefined)?.certificate ?? '')

/** Go's `%#v` of a []byte, the form a Kubernetes error shows the request in. */
function goBytes (b: Buffer): string {
  return `[]byte{${[...b].map(x => `0x${x.toString(16)}`).join(', ')}}`
}

function invalidRaw (field: string, shown: string, detail: string): FieldError {
  return { type: 'FieldValueInvalid', field, message: `Invalid value: ${shown}: ${detail}` }
}

/** Validation of the signer name (apivalidation.ValidateSignerName). */
export function validateSignerName (field: string, name: string): FieldError[] {
  if (name === '') return [required(field)]
  const segments = name.split('/')
  if (segments.length !== 2) return [invalid(field, name, "must be a fully qualified domain and path of the form 'example.com/signer-name'")]
  const [domain, path] = segments
  const errs: FieldError[] = []
  if (domain.length > 253) errs.push(tooLongBytes(field, 253))
  const labels = domain.split('.')
  for (const l of labels) {
    const bad = isDNS1123Label(l)
    if (bad.length === 0) continue
    for (const e of bad) errs.push(invalid(field, domain, `validating label ${JSON.stringify(l)}: ${e}`))
    break
  }
  if (labels.length < 2) errs.push(invalid(field, domain, 'should be a domain with at least two segments separated by dots'))
  for (const l of path.split('.')) {
    const bad = isDNS1123Subdomain(l)
    if (bad.length === 0) continue
    for (const e of bad) errs.push(invalid(field, path, `validating label ${JSON.stringify(l)}: ${e}`))
    break
  }
  const maxPath = 253 + 63 + 1
  if (path.length > maxPath) errs.push(tooLongBytes(field, maxPath))
  const maxName = 253 + maxPath + 1
  if (name.length > maxName) errs.push(tooLongBytes(field, maxName))
  return errs
}

/** spec.request's PEM text (the field is base64 in JSON). */
export function requestBytes (csr: Obj): Buffer {
  const r = specOf(csr).request
  return typeof r === 'string' ? Buffer.from(r, 'base64') : Buffer.alloc(0)
}

/** The spec and conditions (validateCertificateSigningRequest without the certificate, which only updates set). */
export async function validateCsr (csr: Obj): Promise<FieldError[]> {
  const spec = specOf(csr)
  const errs: FieldError[] = []
  // A missing request or signerName is the schema's Required error already.
  const request = requestBytes(csr)
  if (spec.request !== undefined) {
    try {
      await parseAndVerifyCsr(request)
    } catch (err) {
      if (!(err instanceof CsrError)) throw err
      errs.push(invalidRaw('spec.request', goBytes(request), err.message))
    }
  }
  const usages = Array.isArray(spec.usages) ? spec.usages as string[] : []
  if (usages.length === 0) errs.push(required('spec.usages'))
  usages.forEach((u, i) => { if (!isValidUsage(u)) errs.push(notSupported(`spec.usages[${i}]`, u, [...VALID_USAGES])) })
  usages.forEach((u, i) => { if (usages.indexOf(u) < i) errs.push(duplicate(`spec.usages[${i}]`, u)) })
  const signer = typeof spec.signerName === 'string' ? spec.signerName : ''
  if (spec.signerName === undefined) { /* reported by the schema */ } else if (signer === LEGACY_UNKNOWN_SIGNER) errs.push(invalid('spec.signerName', signer, 'the legacy signerName is not allowed via this API version'))
  else errs.push(...validateSignerName('spec.signerName', signer))
  if (typeof spec.expirationSeconds === 'number' && spec.expirationSeconds < 600) {
    errs.push(invalid('spec.expirationSeconds', spec.expirationSeconds, 'may not specify a duration less than 600 seconds (10 minutes)'))
  }
  errs.push(...validateConditions(conditionsOf(csr)))
  return errs
}

function validateConditions (conditions: CsrCondition[]): FieldError[] {
  const errs: FieldError[] = []
  const seen = new Set<string>()
  let approved = false
  let denied = false
  conditions.forEach((c, i) => {
    const at = `status.conditions[${i}]`
    const type = c.type ?? ''
    if (type === '') errs.push(required(`${at}.type`))
    const allowed = TRUE_ONLY_TYPES.has(type) ? ['True'] : ALL_STATUSES
    if ((c.status ?? '') === '') errs.push(required(`${at}.status`))
    else if (!allowed.includes(c.status ?? '')) errs.push(notSupported(`${at}.status`, c.status, allowed))
    if (type === APPROVED) { approved = true; if (denied) errs.push(invalid(`${at}.type`, type, 'Approved and Denied conditions are mutually exclusive')) }
    if (type === DENIED) { denied = true; if (approved) errs.push(invalid(`${at}.type`, type, 'Approved and Denied conditions are mutually exclusive')) }
    if (seen.has(type)) errs.push(duplicate(`${at}.type`, type))
    seen.add(type)
  })
  return errs
}

/** status.certificate: PEM CERTIFICATE blocks only, at least one (validateCertificate); undefined when fine. */
export function certificateProblem (pem: string): string | undefined {
  const blocks = [...pem.matchAll(/-----BEGIN ([A-Z0-9 ]+)-----\r?\n([\s\S]*?)-----END \1-----/g)]
  if (blocks.length === 0) return 'must contain at least one CERTIFICATE PEM block'
  for (const b of blocks) {
    if (b[1] !== 'CERTIFICATE') return `only CERTIFICATE PEM blocks are allowed, found ${JSON.stringify(b[1])}`
    if (/^[\w-]+:/m.test(b[2])) return 'no PEM block headers are permitted'
  }
  return undefined
}

/** The rules comparing the new object with the stored one (validateCertificateSigningRequestUpdate). */
export function validateCsrUpdate (csr: Obj, old: Obj): FieldError[] {
  const errs: FieldError[] = []
  for (const t of [APPROVED, DENIED, FAILED]) {
    const count = (o: Obj): number => conditionsOf(o).filter(c => c.type === t).length
    if (count(csr) < count(old)) errs.push(forbidden('status.conditions', `updates may not remove a condition of type ${JSON.stringify(t)}`))
  }
  const cert = Buffer.from(certificateOf(csr), 'base64').toString('latin1')
  const oldCert = Buffer.from(certificateOf(old), 'base64').toString('latin1')
  if (cert !== oldCert) {
    if (oldCert !== '') errs.push(forbidden('status.certificate', 'updates may not modify existing certificate content'))
    else if (!conditionsOf(csr).some(c => c.type === APPROVED && c.status === 'True')) {
      errs.push(forbidden('status.certificate', 'updates may not set certificate content unless the request is approved'))
    } else {
      const problem = certificateProblem(cert)
      if (problem !== undefined) errs.push(invalid('status.certificate', '<certificate data>', problem))
    }
  }
  return errs
}
