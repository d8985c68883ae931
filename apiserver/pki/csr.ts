// PKCS#10 certificate requests: parsing a CSR's PEM (as Go's certificates.ParseCSR), its signature check, making one,
// and issuing a certificate for it with the usages a CertificateSigningRequest names.
//
// Parse and signature errors carry Go's wording, since they are shown in a CSR's validation Status.

import { webcrypto } from 'node:crypto'
import * as x509 from '@peculiar/x509'
import { serialNumber, type CertificateAuthority } from './certs.js'
import { keyUsageBits, extendedKeyUsageOids } from './key-usages.js'

x509.cryptoProvider.set(webcrypto as unknown as Crypto)

const CSR_BLOCK = /-----BEGIN ([A-Z0-9 ]+)-----\r?\n([\s\S]*?)-----END \1-----/

/** What the signers and approvers look at in a request (Go's x509.CertificateRequest fields). */
export interface ParsedCsr {
  raw: x509.Pkcs10CertificateRequest
  commonName: string
  organizations: string[]
  dnsNames: string[]
  ipAddresses: string[]
  emailAddresses: string[]
  uris: string[]
}

/** A CSR's problem, worded as Go's certificates.ParseCSR / CheckSignature report it. */
export class CsrError extends Error {
  override readonly name = 'CsrError'
}

/** The first PEM block of `pem` when it is a CERTIFICATE REQUEST; throws CsrError otherwise. */
export function parseCsr (pem: string | Buffer): ParsedCsr {
  const text = Buffer.isBuffer(pem) ? pem.toString('latin1') : pem
  const m = CSR_BLOCK.exec(text)
  if (m === null || m[1] !== 'CERTIFICATE REQUEST') throw new CsrError('PEM block type must be CERTIFICATE REQUEST')
  let raw: x509.Pkcs10CertificateRequest
  try {
    const der = Buffer.from(m[2].replace(/\s+/g, ''), 'base64')
    raw = new x509.Pkcs10CertificateRequest(der)
  } catch (err) {
    throw new CsrError(`asn1: structure error: ${(err as Error).message}`)
  }
  const sans = subjectAltNames(raw)
  return {
    raw,
    commonName: raw.subjectName.getField('CN')[0] ?? '',
    organizations: raw.subjectName.getField('O'),
    dnsNames: sans.filter(n => n.type === 'dns').map(n => n.value),
    ipAddresses: sans.filter(n => n.type === 'ip').map(n => n.value),
    emailAddresses: sans.filter(n => n.type === 'email').map(n => n.value),
    uris: sans.filter(n => n.type === 'url').map(n => n.value)
  }
}

function subjectAltNames (csr: x509.Pkcs10CertificateRequest): Array<{ type: string; value: string }> {
  const ext = csr.getExtension('2.5.29.17')
  if (ext === null) return []
  return new x509.SubjectAlternativeNameExtension(ext.rawData).names.items.map(n => ({ type: n.type, value: n.value }))
}

/** Parses and checks the request's signature (throws CsrError with Go's message when it does not verify). */
export async function parseAndVerifyCsr (pem: string | Buffer): Promise<ParsedCsr> {
  const csr = parseCsr(pem)
  let ok = false
  try { ok = await csr.raw.verify() } catch { ok = false }
  if (!ok) {
    const alg = csr.raw.publicKey.algorithm.name
    throw new CsrError(alg === 'ECDSA' ? 'x509: ECDSA verification failure' : 'crypto/rsa: verification error')
  }
  return csr
}

export interface CsrRequestOptions {
  commonName: string
  organizations?: string[]
  dnsNames?: string[]
  ipAddresses?: string[]
}

/** A fresh ECDSA P-256 key and a CSR for it (PEM both): what `orch kubeconfig --user` and tests submit. */
export async function createCsr (o: CsrRequestOptions): Promise<{ csrPem: string; keyPem: string }> {
  const keys = await webcrypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, true, ['sign', 'verify']) as CryptoKeyPair
  const name: x509.JsonName = [...(o.organizations ?? []).map(org => ({ O: [org] })), { CN: [o.commonName] }]
  const sans = [...(o.dnsNames ?? []).map(v => ({ type: 'dns' as const, value: v })), ...(o.ipAddresses ?? []).map(v => ({ type: 'ip' as const, value: v }))]
  const csr = await x509.Pkcs10CertificateRequestGenerator.create({
    name,
    keys,
    signingAlgorithm: { name: 'ECDSA', hash: 'SHA-256' } as EcdsaParams,
    extensions: sans.length > 0 ? [new x509.SubjectAlternativeNameExtension(sans)] : []
  })
  const der = await webcrypto.subtle.exportKey('pkcs8', keys.privateKey)
  const b64 = Buffer.from(der).toString('base64').replace(/(.{64})/g, '$1\n').replace(/\n$/, '')
  return { csrPem: csr.toString('pem') + '\n', keyPem: `-----BEGIN PRIVATE KEY-----\n${b64}\n-----END PRIVATE KEY-----\n` }
}

export interface SignCsrOptions {
  usages: string[]
  notBefore: Date
  notAfter: Date
}

/**
 * A certificate for the request's key, subject and subject alternative names, with the key usages and extended key
 * usages of `usages` (CertificateSigningRequest spec.usages), not a CA, signed by `ca`. PEM.
 */
export async function signCsr (ca: CertificateAuthority, csr: ParsedCsr, o: SignCsrOptions): Promise<string> {
  const extensions: x509.Extension[] = [new x509.BasicConstraintsExtension(false, undefined, true)]
  const bits = keyUsageBits(o.usages)
  if (bits !== 0) extensions.push(new x509.KeyUsagesExtension(bits, true))
  const ext = extendedKeyUsageOids(o.usages)
  if (ext.length > 0) extensions.push(new x509.ExtendedKeyUsageExtension(ext))
  extensions.push(await x509.AuthorityKeyIdentifierExtension.create(ca.cert))
  const sans = csr.raw.getExtension('2.5.29.17')
  if (sans !== null) extensions.push(new x509.SubjectAlternativeNameExtension(sans.rawData))
  const signing = ca.key.key
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: serialNumber(),
    subject: csr.raw.subjectName,
    issuer: ca.cert.subjectName,
    notBefore: o.notBefore,
    notAfter: o.notAfter,
    publicKey: csr.raw.publicKey,
    signingKey: signing,
    signingAlgorithm: signing.algorithm.name === 'ECDSA' ? { name: 'ECDSA', hash: 'SHA-256' } as EcdsaParams : { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' } as Algorithm,
    extensions
  })
  return cert.toString('pem') + '\n'
}
