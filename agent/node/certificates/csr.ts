// What the orchlet asks a signer for: its private keys (ECDSA P-256), PKCS#10 requests for the node identity, and the usages by key type.

import { createPrivateKey, createPublicKey, webcrypto } from 'node:crypto'
import * as x509 from '@peculiar/x509'

// The library's own (idempotent) global: use Node's webcrypto.
x509.cryptoProvider.set(webcrypto as unknown as Crypto)

/** Subject and subject alternative names of a request. */
export interface CsrTemplate {
  commonName: string
  organizations: string[]
  dnsNames?: string[]
  ipAddresses?: string[]
}

/** The kubelet's node identity: CN=system:node:<name>, O=system:nodes. */
export function nodeTemplate (nodeName: string, sans: { dnsNames?: string[]; ipAddresses?: string[] } = {}): CsrTemplate {
  return { commonName: `system:node:${nodeName}`, organizations: ['system:nodes'], ...sans }
}

function pem (label: string, der: ArrayBuffer): string {
  const b64 = Buffer.from(der).toString('base64').replace(/(.{64})/g, '$1\n').replace(/\n$/, '')
  return `-----BEGIN ${label}-----\n${b64}\n-----END ${label}-----\n`
}

/** A fresh ECDSA P-256 private key, PKCS#8 PEM. */
export async function generatePrivateKey (): Promise<string> {
  const keys = await webcrypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, true, ['sign', 'verify']) as CryptoKeyPair
  return pem('PRIVATE KEY', await webcrypto.subtle.exportKey('pkcs8', keys.privateKey))
}

/** Whether the key is RSA (its requests then also ask for "key encipherment", as the kubelet's do). */
export function isRsaKey (keyPem: string): boolean {
  return createPrivateKey(keyPem).asymmetricKeyType === 'rsa'
}

/** Usages of a client (`client auth`) or serving (`server auth`) certificate for this key, in the kubelet's terms. */
export function usagesFor (keyPem: string, purpose: 'client' | 'server'): string[] {
  const auth = purpose === 'client' ? 'client auth' : 'server auth'
  return isRsaKey(keyPem) ? ['digital signature', 'key encipherment', auth] : ['digital signature', auth]
}

async function importKeys (keyPem: string): Promise<{ keys: CryptoKeyPair; signing: Algorithm | EcdsaParams }> {
  const priv = createPrivateKey(keyPem)
  const pkcs8 = priv.export({ format: 'der', type: 'pkcs8' })
  const spki = createPublicKey(priv).export({ format: 'der', type: 'spki' })
  let alg: EcKeyImportParams | RsaHashedImportParams
  let signing: Algorithm | EcdsaParams
  if (priv.asymmetricKeyType === 'ec') {
    const curve = priv.asymmetricKeyDetails?.namedCurve
    alg = { name: 'ECDSA', namedCurve: curve === 'secp384r1' ? 'P-384' : curve === 'secp521r1' ? 'P-521' : 'P-256' }
    signing = { name: 'ECDSA', hash: 'SHA-256' } as EcdsaParams
  } else if (priv.asymmetricKeyType === 'rsa') {
    alg = { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' }
    signing = alg
  } else {
    throw new Error(`unsupported private key type ${String(priv.asymmetricKeyType)}`)
  }
  const privateKey = await webcrypto.subtle.importKey('pkcs8', pkcs8, alg, true, ['sign'])
  const publicKey = await webcrypto.subtle.importKey('spki', spki, alg, true, ['verify'])
  return { keys: { privateKey, publicKey } as CryptoKeyPair, signing }
}

/** A PEM CERTIFICATE REQUEST for `keyPem` with the template's subject and subject alternative names. */
export async function createCsrPem (keyPem: string, t: CsrTemplate): Promise<string> {
  const { keys, signing } = await importKeys(keyPem)
  const name: x509.JsonName = [...t.organizations.map(o => ({ O: [o] })), { CN: [t.commonName] }]
  const sans = [
    ...(t.dnsNames ?? []).map(value => ({ type: 'dns' as const, value })),
    ...(t.ipAddresses ?? []).map(value => ({ type: 'ip' as const, value }))
  ]
  const csr = await x509.Pkcs10CertificateRequestGenerator.create({
    name,
    keys,
    signingAlgorithm: signing,
    extensions: sans.length > 0 ? [new x509.SubjectAlternativeNameExtension(sans)] : []
  })
  return csr.toString('pem') + '\n'
}
