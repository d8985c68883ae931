// Certificate/key pairs as the orchlet keeps them: one PEM file holding the certificate(s) then the key, and the leaf's validity.

import { createPrivateKey, X509Certificate } from 'node:crypto'

/** A certificate chain with its private key (both PEM) and the leaf's validity (ms since the epoch). */
export interface CertKeyPair {
  certPem: string
  keyPem: string
  notBefore: number
  notAfter: number
}

const CERT_BLOCK = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----\r?\n?/g
const KEY_BLOCK = /-----BEGIN ((?:EC |RSA )?PRIVATE KEY)-----[\s\S]+?-----END \1-----\r?\n?/

/** Parses a pair; throws when the certificate does not parse or the key is not the certificate's. */
export function parsePair (certPem: string, keyPem: string): CertKeyPair {
  const leaf = new X509Certificate(certPem)
  if (!leaf.checkPrivateKey(createPrivateKey(keyPem))) throw new Error('the private key does not match the certificate')
  return { certPem, keyPem, notBefore: Date.parse(leaf.validFrom), notAfter: Date.parse(leaf.validTo) }
}

/** Splits one file holding certificates and a key (the kubelet's `-current.pem` layout). */
export function splitCombinedPem (text: string): { certPem: string; keyPem: string } {
  const certs = text.match(CERT_BLOCK) ?? []
  const key = KEY_BLOCK.exec(text)
  if (certs.length === 0) throw new Error('no CERTIFICATE block')
  if (key === null) throw new Error('no PRIVATE KEY block')
  return { certPem: certs.map(c => c.endsWith('\n') ? c : c + '\n').join(''), keyPem: key[0].endsWith('\n') ? key[0] : key[0] + '\n' }
}

/** The file form of a pair: certificates first, then the key. */
export function combinedPem (certPem: string, keyPem: string): string {
  const nl = (s: string): string => s.endsWith('\n') ? s : s + '\n'
  return nl(certPem) + nl(keyPem)
}

/** Whether `now` lies within the pair's validity. */
export function isValidAt (pair: CertKeyPair, now: number): boolean {
  return now >= pair.notBefore && now < pair.notAfter
}
