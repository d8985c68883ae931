// Composes the API server's security from its flags: the PKI in DATA_DIR/pki, the TLS options, the authenticator chain.

import { hostname, networkInterfaces } from 'node:os'
import { join } from 'node:path'
import { createAuthenticator, type Authenticator } from '../auth/authenticator.js'
import { createServiceAccountTokens, type ServiceAccountTokens, type UidLookup } from '../auth/service-account-tokens.js'
import { loadTokenFile } from '../auth/token-file.js'
import type { RequestAuthenticator, TokenAuthenticator } from '../auth/types.js'
import { x509Authenticator } from '../auth/x509.js'
import { issueCertificate, type KeyPair } from '../pki/certs.js'
import { ensureServerPki, type ServerPki } from '../pki/data-dir.js'
import type { ServerTls } from '../server.js'
import { writeKubeconfig } from './kubeconfig.js'
import type { SecurityOptions } from './security-flags.js'

/** The names in-cluster clients use for the API server (the `kubernetes` Service), as kube-apiserver's certificate carries. */
const SERVICE_NAMES = ['kubernetes', 'kubernetes.default', 'kubernetes.default.svc', 'kubernetes.default.svc.cluster.local']

/** Every name and address the serving certificate must cover for a server bound to `bindAddress`. */
export function servingHosts (bindAddress: string, extra: string[] = []): string[] {
  const hosts = new Set<string>(['localhost', '127.0.0.1', '::1', hostname().toLowerCase(), ...SERVICE_NAMES, ...extra])
  const wildcard = bindAddress === '' || bindAddress === '0.0.0.0' || bindAddress === '::'
  if (!wildcard) hosts.add(bindAddress)
  else {
    // A wildcard bind is reached on every address of the machine.
    for (const list of Object.values(networkInterfaces())) for (const a of list ?? []) hosts.add(a.address.replace(/%.*$/, ''))
  }
  return [...hosts]
}

export interface ServerSecurity {
  pki: ServerPki
  tls: ServerTls
  options: SecurityOptions
}

/** Loads or makes the keys and certificates; nothing listens yet. */
export async function prepareSecurity (dataDir: string, bindAddress: string, o: SecurityOptions, extraHosts: string[] = []): Promise<ServerSecurity> {
  const pki = await ensureServerPki({
    dataDir,
    hosts: servingHosts(bindAddress, extraHosts),
    tlsCertFile: o.tlsCertFile,
    tlsPrivateKeyFile: o.tlsPrivateKeyFile,
    clientCaFile: o.clientCaFile,
    serviceAccountKeyFiles: o.serviceAccountKeyFiles,
    serviceAccountSigningKeyFile: o.serviceAccountSigningKeyFile
  })
  return {
    pki,
    options: o,
    tls: { cert: pki.serving.certPem, key: pki.serving.keyPem, clientCa: pki.clientCaPem, minVersion: o.tls.minVersion, ciphers: o.tls.ciphers }
  }
}

export interface Authentication {
  authenticator: Authenticator
  serviceAccountTokens: ServiceAccountTokens
}

/**
 * The authenticator chain as kube-apiserver orders it: client certificates, then bearer tokens (static file, extra
 * token authenticators such as bootstrap tokens or JWT issuers, then service-account tokens), then anonymous.
 */
export async function buildAuthentication (s: ServerSecurity, lookup: UidLookup, extraTokens: TokenAuthenticator[] = [], extraRequest: RequestAuthenticator[] = []): Promise<Authentication> {
  const o = s.options
  const serviceAccountTokens = createServiceAccountTokens({
    signingKeyPem: s.pki.serviceAccountSigningKeyPem,
    verifyKeyPems: s.pki.serviceAccountVerifyKeyPems,
    issuers: o.serviceAccountIssuers,
    lookup,
    now: () => Date.now()
  })
  const tokens: TokenAuthenticator[] = []
  if (o.tokenAuthFile !== undefined) tokens.push(await loadTokenFile(o.tokenAuthFile))
  tokens.push(...extraTokens, serviceAccountTokens)
  const authenticator = createAuthenticator({
    request: [x509Authenticator(), ...extraRequest],
    tokens,
    apiAudiences: o.apiAudiences,
    anonymous: o.anonymousAuth
  })
  return { authenticator, serviceAccountTokens }
}

/** A client certificate for a node's orchlet (CN system:node:NAME in system:nodes), as a kubeadm node gets one. */
export async function issueNodeClient (pki: ServerPki, nodeName: string): Promise<KeyPair> {
  return await issueCertificate(pki.ca, { subject: { commonName: `system:node:${nodeName}`, organizations: ['system:nodes'] }, usage: 'client' })
}

/** Writes a kubeconfig at `path` for `server` with the CA and the given client pair. */
export async function writeClientKubeconfig (path: string, server: string, pki: ServerPki, pair: KeyPair): Promise<void> {
  await writeKubeconfig(path, server, { caPem: pki.servingCaPem, clientCertPem: pair.certPem, clientKeyPem: pair.keyPem })
}

export const nodeKubeconfigPath = (dataDir: string): string => join(dataDir, 'orchlet', 'orchconfig')
