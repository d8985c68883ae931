// Test fixtures of authentication: a fresh service-account signing key pair.

import { generateKeyPairSync } from 'node:crypto'

/** A new ECDSA P-256 key pair as PEM, the shape `createServiceAccountTokens` takes. */
export function serviceAccountKeys (): { signingKeyPem: string; verifyKeyPems: string[] } {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' })
  return {
    signingKeyPem: privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(),
    verifyKeyPems: [publicKey.export({ format: 'pem', type: 'spki' }).toString()]
  }
}
