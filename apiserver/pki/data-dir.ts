// The API server's keys and certificates under DATA_DIR/pki: made on first start, reused after, or taken from files.
//
// Files (keys 0600, folder 0700): ca.crt/ca.key (the cluster CA: signs the serving certificate, client
// certificates and CSRs), apiserver.crt/apiserver.key (serving), admin.crt/admin.key (CN=orch-admin,
// O=system:masters, for the kubeconfig), apiserver-orchlet-client.crt/.key (towards orchlets), sa.key (service-account token signing key, ECDSA P-256).
// A serving certificate that no longer covers the hosts (another bind address, host name) or expires within
// 30 days is issued again; so is an admin certificate close to expiry.

import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises'
import { generateKeyPairSync } from 'node:crypto'
import { join } from 'node:path'
import { certificateCovers, createCa, issueCertificate, loadCa, publicKeyPem, splitPemBundle, type CertificateAuthority, type KeyPair } from './certs.js'

export interface PkiOptions {
  dataDir: string
  /** Names and addresses the serving certificate must cover. */
  hosts: string[]
  /** --tls-cert-file / --tls-private-key-file: serve with these instead of a generated pair. */
  tlsCertFile?: string
  tlsPrivateKeyFile?: string
  /** --client-ca-file: client certificates signed by these CAs are accepted too. */
  clientCaFile?: string
  /** --service-account-key-file: extra PEM public (or private) keys that verify service-account tokens. */
  serviceAccountKeyFiles?: string[]
  /** --service-account-signing-key-file: the key that signs tokens (default: the generated DATA_DIR/pki/sa.key). */
  serviceAccountSigningKeyFile?: string
  now?: () => Date
}

export interface ServerPki {
  ca: CertificateAuthority
  /** The serving pair (PEM). */
  serving: KeyPair
  /** What a client should trust for the serving certificate (the kubeconfig's certificate-authority-data). */
  servingCaPem: string
  /** CAs whose client certificates authenticate (the cluster CA plus --client-ca-file). */
  clientCaPem: string
  /** A client certificate for CN=orch-admin in system:masters. */
  admin: KeyPair
  /** The API server's client certificate towards orchlets (logs, exec): CN=orch-apiserver-orchlet-client in system:masters. */
  orchletClient: KeyPair
  /** Signing key of service-account tokens (PEM) and every key that verifies them (PEM public keys). */
  serviceAccountSigningKeyPem: string
  serviceAccountVerifyKeyPems: string[]
}

async function readIfExists (path: string): Promise<string | undefined> {
  try { return await readFile(path, 'utf8') } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw err
  }
}

async function writeSecret (path: string, text: string): Promise<void> {
  await writeFile(path, text, { mode: 0o600 })
  await chmod(path, 0o600)
}

async function clusterCa (dir: string, now: Date): Promise<CertificateAuthority> {
  const certPem = await readIfExists(join(dir, 'ca.crt'))
  const keyPem = await readIfExists(join(dir, 'ca.key'))
  if (certPem !== undefined && keyPem !== undefined) return await loadCa(certPem, keyPem)
  const ca = await createCa('orch-ca', now)
  await writeSecret(join(dir, 'ca.key'), ca.key.pem)
  await writeFile(join(dir, 'ca.crt'), ca.certPem)
  return ca
}

/** A pair under `dir` issued by `ca`, issued again when `valid` says the stored one will not do. */
async function issuedPair (dir: string, name: string, ca: CertificateAuthority, valid: (certPem: string) => boolean,
  issue: () => Promise<KeyPair>): Promise<KeyPair> {
  const certPem = await readIfExists(join(dir, `${name}.crt`))
  const keyPem = await readIfExists(join(dir, `${name}.key`))
  if (certPem !== undefined && keyPem !== undefined && valid(certPem)) return { certPem, keyPem }
  const pair = await issue()
  await writeSecret(join(dir, `${name}.key`), pair.keyPem)
  await writeFile(join(dir, `${name}.crt`), pair.certPem)
  return pair
}

async function serviceAccountKeys (dir: string, o: PkiOptions): Promise<{ signing: string; verify: string[] }> {
  let signing: string | undefined
  if (o.serviceAccountSigningKeyFile !== undefined) signing = await readFile(o.serviceAccountSigningKeyFile, 'utf8')
  else {
    const path = join(dir, 'sa.key')
    signing = await readIfExists(path)
    if (signing === undefined) {
      signing = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'pem', type: 'pkcs8' }).toString()
      await writeSecret(path, signing)
    }
  }
  const verify = [publicKeyPem(signing)]
  for (const f of o.serviceAccountKeyFiles ?? []) verify.push(publicKeyPem(await readFile(f, 'utf8')))
  return { signing, verify }
}

/** Loads or makes everything the API server needs to serve HTTPS and sign tokens. */
export async function ensureServerPki (o: PkiOptions): Promise<ServerPki> {
  const dir = join(o.dataDir, 'pki')
  await mkdir(dir, { recursive: true, mode: 0o700 })
  await chmod(dir, 0o700)
  const now = o.now?.() ?? new Date()
  const ca = await clusterCa(dir, now)
  let serving: KeyPair
  let servingCaPem = ca.certPem
  if (o.tlsCertFile !== undefined || o.tlsPrivateKeyFile !== undefined) {
    if (o.tlsCertFile === undefined || o.tlsPrivateKeyFile === undefined) throw new Error('--tls-cert-file and --tls-private-key-file must be given together')
    serving = { certPem: await readFile(o.tlsCertFile, 'utf8'), keyPem: await readFile(o.tlsPrivateKeyFile, 'utf8') }
    // A bundle's last certificate is taken as its root; a single certificate is trusted as itself.
    const chain = splitPemBundle(serving.certPem)
    if (chain.length === 0) throw new Error(`--tls-cert-file ${o.tlsCertFile} holds no PEM certificate`)
    servingCaPem = chain[chain.length - 1]
  } else {
    serving = await issuedPair(dir, 'apiserver', ca, pem => certificateCovers(pem, ca.certPem, o.hosts, now.getTime()),
      async () => await issueCertificate(ca, { subject: { commonName: 'orch-apiserver' }, usage: 'server', hosts: o.hosts, now }))
  }
  const admin = await issuedPair(dir, 'admin', ca, pem => certificateCovers(pem, ca.certPem, [], now.getTime()),
    async () => await issueCertificate(ca, { subject: { commonName: 'orch-admin', organizations: ['system:masters'] }, usage: 'client', now }))
  const orchletClient = await issuedPair(dir, 'apiserver-orchlet-client', ca, pem => certificateCovers(pem, ca.certPem, [], now.getTime()),
    async () => await issueCertificate(ca, { subject: { commonName: 'orch-apiserver-orchlet-client', organizations: ['system:masters'] }, usage: 'client', now }))
  let clientCaPem = ca.certPem
  if (o.clientCaFile !== undefined) clientCaPem += await readFile(o.clientCaFile, 'utf8')
  const sa = await serviceAccountKeys(dir, o)
  return { ca, serving, servingCaPem, clientCaPem, admin, orchletClient, serviceAccountSigningKeyPem: sa.signing, serviceAccountVerifyKeyPems: sa.verify }
}
