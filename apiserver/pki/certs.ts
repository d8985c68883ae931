// Certificates and keys: a CA, certificates it signs (serving, client), PEM in and out, through @peculiar/x509 and webcrypto.
//
// Keys are ECDSA P-256 (fast to make, accepted by Go's crypto/tls, i.e. kubectl, and by Node). Keys given by the
// user may also be RSA. Every function takes what it needs; nothing is cached at module level except telling
// @peculiar/x509 to use Node's webcrypto, which is the library's own (idempotent) global.

import { createPrivateKey, createPublicKey, randomBytes, webcrypto, X509Certificate as NodeX509 } from 'node:crypto'
import { isIP } from 'node:net'
import * as x509 from '@peculiar/x509'

x509.cryptoProvider.set(webcrypto as unknown as Crypto)

const EC: EcKeyGenParams = { name: 'ECDSA', namedCurve: 'P-256' }
const EC_SIGN: EcdsaParams = { name: 'ECDSA', hash: 'SHA-256' }
const RSA_SIGN = { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' }

/** A private key as webcrypto needs it for signing, with its PEM. */
export interface SigningKey { key: CryptoKey; pem: string }

/** A CA: its certificate (PEM) and private key. */
export interface CertificateAuthority { certPem: string; cert: x509.X509Certificate; key: SigningKey }

/** A certificate with its private key, both PEM. */
export interface KeyPair { certPem: string; keyPem: string }

export interface Subject { commonName: string; organizations?: string[] }

function pem (label: string, der: ArrayBuffer): string {
  const b64 = Buffer.from(der).toString('base64').replace(/(.{64})/g, '$1\n').replace(/\n$/, '')
  return `-----BEGIN ${label}-----\n${b64}\n-----END ${label}-----\n`
}

function jsonName (s: Subject): x509.JsonName {
  const name: x509.JsonName = []
  for (const o of s.organizations ?? []) name.push({ O: [o] })
  name.push({ CN: [s.commonName] })
  return name
}

/** A random positive 128-bit serial number (hex). */
export function serialNumber (): string {
  const b = randomBytes(16)
  b[0] &= 0x7f // positive
  return b.toString('hex')
}

async function newKeyPair (): Promise<CryptoKeyPair> {
  return await webcrypto.subtle.generateKey(EC, true, ['sign', 'verify']) as CryptoKeyPair
}

async function exportPrivate (key: CryptoKey): Promise<string> {
  return pem('PRIVATE KEY', await webcrypto.subtle.exportKey('pkcs8', key))
}

/** Reads a PEM private key (PKCS#1, PKCS#8 or SEC1; RSA or EC) for signing. */
export async function importSigningKey (keyPem: string): Promise<SigningKey> {
  const ko = createPrivateKey(keyPem)
  const der = ko.export({ format: 'der', type: 'pkcs8' })
  const type = ko.asymmetricKeyType
  let alg: RsaHashedImportParams | EcKeyImportParams
  if (type === 'rsa') alg = { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' }
  else if (type === 'ec') {
    const curve = ko.asymmetricKeyDetails?.namedCurve
    const namedCurve = curve === 'secp384r1' ? 'P-384' : curve === 'secp521r1' ? 'P-521' : 'P-256'
    alg = { name: 'ECDSA', namedCurve }
  } else throw new Error(`unsupported private key type ${String(type)}`)
  const key = await webcrypto.subtle.importKey('pkcs8', der, alg, true, ['sign'])
  return { key, pem: keyPem }
}

function signingAlgorithm (key: CryptoKey): Algorithm | EcdsaParams {
  return key.algorithm.name === 'ECDSA' ? EC_SIGN : RSA_SIGN
}

const DAY = 24 * 3600 * 1000

/** A self-signed CA valid for `days` (default 10 years, as kubeadm's). */
export async function createCa (commonName: string, now = new Date(), days = 3650): Promise<CertificateAuthority> {
  const keys = await newKeyPair()
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serialNumber(),
    name: jsonName({ commonName }),
    notBefore: new Date(now.getTime() - 60_000),
    notAfter: new Date(now.getTime() + days * DAY),
    keys,
    signingAlgorithm: EC_SIGN,
    extensions: [
      new x509.BasicConstraintsExtension(true, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign | x509.KeyUsageFlags.digitalSignature, true),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey)
    ]
  })
  return { certPem: cert.toString('pem') + '\n', cert, key: { key: keys.privateKey, pem: await exportPrivate(keys.privateKey) } }
}

/** Loads a CA from PEM files' contents. */
export async function loadCa (certPem: string, keyPem: string): Promise<CertificateAuthority> {
  return { certPem, cert: new x509.X509Certificate(certPem), key: await importSigningKey(keyPem) }
}

export interface IssueOptions {
  subject: Subject
  usage: 'server' | 'client'
  /** DNS names and IP addresses (serving certificates). */
  hosts?: string[]
  now?: Date
  /** Lifetime in seconds (default one year). */
  validitySeconds?: number
  /** Sign this public key instead of making a new pair (CSRs); the answer then has no key. */
  publicKey?: CryptoKey | x509.PublicKey
}

/** A certificate signed by `ca`; a fresh key pair unless `publicKey` is given. */
export async function issueCertificate (ca: CertificateAuthority, o: IssueOptions): Promise<KeyPair> {
  const now = o.now ?? new Date()
  const keys = o.publicKey === undefined ? await newKeyPair() : undefined
  const publicKey = o.publicKey ?? keys!.publicKey
  const extensions: x509.Extension[] = [
    new x509.BasicConstraintsExtension(false, undefined, true),
    new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment, true),
    new x509.ExtendedKeyUsageExtension([o.usage === 'server' ? x509.ExtendedKeyUsage.serverAuth : x509.ExtendedKeyUsage.clientAuth]),
    await x509.AuthorityKeyIdentifierExtension.create(ca.cert)
  ]
  if (o.hosts !== undefined && o.hosts.length > 0) {
    extensions.push(new x509.SubjectAlternativeNameExtension(o.hosts.map(h => isIP(h) === 0 ? { type: 'dns' as const, value: h } : { type: 'ip' as const, value: h })))
  }
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: serialNumber(),
    subject: jsonName(o.subject),
    issuer: ca.cert.subjectName,
    notBefore: new Date(now.getTime() - 60_000),
    notAfter: new Date(now.getTime() + (o.validitySeconds ?? 365 * 24 * 3600) * 1000),
    publicKey,
    signingKey: ca.key.key,
    signingAlgorithm: signingAlgorithm(ca.key.key),
    extensions
  })
  return { certPem: cert.toString('pem') + '\n', keyPem: keys === undefined ? '' : await exportPrivate(keys.privateKey) }
}

/** Whether `certPem` was issued by `caPem`, is valid at `now` for at least `marginMs` more, and covers every host. */
export function certificateCovers (certPem: string, caPem: string, hosts: string[], now = Date.now(), marginMs = 30 * DAY): boolean {
  try {
    const cert = new NodeX509(certPem)
    const ca = new NodeX509(caPem)
    if (!cert.checkIssued(ca) || !cert.verify(ca.publicKey)) return false
    if (Date.parse(cert.validTo) - marginMs < now) return false
    return hosts.every(h => isIP(h) === 0 ? cert.checkHost(h) !== undefined : cert.checkIP(h) !== undefined)
  } catch {
    return false
  }
}

/** The PEM public key of a private key (service-account verification keys). */
export function publicKeyPem (privateKeyPem: string): string {
  return createPublicKey(privateKeyPem).export({ format: 'pem', type: 'spki' }).toString()
}

/** Splits a PEM bundle into its certificates. */
export function splitPemBundle (bundle: string): string[] {
  return bundle.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g)?.map(s => s + '\n') ?? []
}
