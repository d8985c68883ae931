// Test support: an OIDC issuer served over HTTPS on 127.0.0.1 (discovery + JWKS) with a certificate of its own CA, and keys made with jose.

import { createServer, type Server } from 'node:https'
import type { AddressInfo } from 'node:net'
import { exportJWK, generateKeyPair, type JWK, type KeyLike } from 'jose'
import { createCa, issueCertificate } from '../../pki/certs.js'

export interface SigningKey { kid: string; privateKey: KeyLike; jwk: JWK }
export async function newKey (kid: string): Promise<SigningKey> {
  const { privateKey, publicKey } = await generateKeyPair('RS256')
  return { kid, privateKey, jwk: { ...(await exportJWK(publicKey)), kid, alg: 'RS256', use: 'sig' } }
}

/** An OIDC issuer on 127.0.0.1 over HTTPS with a certificate of a test CA; `keys` is what its JWKS serves now. */
export async function startIssuer (): Promise<{ url: string; caPem: string; keys: SigningKey[]; jwksFetches: () => number; server: Server }> {
  const ca = await createCa('oidc-test-ca')
  const serving = await issueCertificate(ca, { subject: { commonName: '127.0.0.1' }, usage: 'server', hosts: ['127.0.0.1'] })
  const state = { keys: [] as SigningKey[], fetches: 0, url: '' }
  const server = createServer({ key: serving.keyPem, cert: serving.certPem }, (req, res) => {
    res.setHeader('content-type', 'application/json')
    if (req.url === '/.well-known/openid-configuration') return res.end(JSON.stringify({ issuer: state.url, jwks_uri: `${state.url}/keys` }))
    if (req.url === '/keys') { state.fetches++; return res.end(JSON.stringify({ keys: state.keys.map(k => k.jwk) })) }
    res.statusCode = 404
    res.end('{}')
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  state.url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`
  return { url: state.url, caPem: ca.certPem, get keys () { return state.keys }, set keys (k) { state.keys = k }, jwksFetches: () => state.fetches, server }
}
