// The CSR signing options of `orch controller-manager` (kube-controller-manager's --cluster-signing-* flags, signer
// names renamed) and of its --config CSRSigningController section: read into ControllerSettings.csrSigning.

import { readFile } from 'node:fs/promises'
import { loadCa, type CertificateAuthority } from '../pki/certs.js'
import type { ControllerSettings } from '../controllers/controller.js'
import { APISERVER_CLIENT, APISERVER_CLIENT_ORCHLET, LEGACY_UNKNOWN, ORCHLET_SERVING } from '../controllers/certificates/signer-rules.js'
import { UsageError, type FlagSpec, type Flags } from './args.js'

/** Per-signer flag stem, config member and signer name. */
const SIGNERS = [
  { flag: 'orchlet-serving', member: 'OrchletServingSignerConfiguration', signer: ORCHLET_SERVING },
  { flag: 'orchlet-client', member: 'OrchletClientSignerConfiguration', signer: APISERVER_CLIENT_ORCHLET },
  { flag: 'orch-apiserver-client', member: 'OrchAPIServerClientSignerConfiguration', signer: APISERVER_CLIENT },
  { flag: 'legacy-unknown', member: 'LegacyUnknownSignerConfiguration', signer: LEGACY_UNKNOWN }
] as const

export const CSR_SIGNING_FLAGS: FlagSpec[] = [
  { name: 'cluster-signing-cert-file', kind: 'string', help: 'PEM CA certificate that signs the certificates of every built-in signer' },
  { name: 'cluster-signing-key-file', kind: 'string', help: 'PEM private key (RSA or ECDSA) of --cluster-signing-cert-file' },
  { name: 'cluster-signing-duration', kind: 'duration', help: 'longest lifetime of a signed certificate (default 8760h); a CSR may ask for less with spec.expirationSeconds' },
  ...SIGNERS.flatMap(s => [
    { name: `cluster-signing-${s.flag}-cert-file`, kind: 'string' as const, help: `PEM CA certificate of the ${s.signer} signer` },
    { name: `cluster-signing-${s.flag}-key-file`, kind: 'string' as const, help: `PEM private key of the ${s.signer} signer` }
  ])
]

type Section = Record<string, any> // eslint-disable-line @typescript-eslint/no-explicit-any

async function readPair (what: string, certFile: string | undefined, keyFile: string | undefined): Promise<CertificateAuthority | undefined> {
  if ((certFile ?? '') === '' && (keyFile ?? '') === '') return undefined
  if ((certFile ?? '') === '' || (keyFile ?? '') === '') throw new UsageError(`${what}: the certificate and key files must be given together`)
  try {
    return await loadCa(await readFile(certFile!, 'utf8'), await readFile(keyFile!, 'utf8'))
  } catch (err) {
    throw new UsageError(`${what}: ${(err as Error).message}`)
  }
}

/**
 * The signing settings from flags (which win) and the CSRSigningController section of --config; undefined when no
 * CA is configured (csrsigning then does not run). The cluster-wide pair and per-signer pairs exclude each other.
 */
export async function loadCsrSigningSettings (flags: Flags, section: Section = {}): Promise<ControllerSettings['csrSigning']> {
  const str = (flag: string, fromConfig: unknown): string | undefined =>
    typeof flags[flag] === 'string' ? flags[flag] as string : typeof fromConfig === 'string' ? fromConfig : undefined
  const ca = await readPair('--cluster-signing-cert-file/--cluster-signing-key-file',
    str('cluster-signing-cert-file', section.ClusterSigningCertFile), str('cluster-signing-key-file', section.ClusterSigningKeyFile))
  const signers: Record<string, CertificateAuthority> = {}
  for (const s of SIGNERS) {
    const pair = await readPair(`--cluster-signing-${s.flag}-cert-file/--cluster-signing-${s.flag}-key-file`,
      str(`cluster-signing-${s.flag}-cert-file`, section[s.member]?.CertFile), str(`cluster-signing-${s.flag}-key-file`, section[s.member]?.KeyFile))
    if (pair !== undefined) signers[s.signer] = pair
  }
  if (ca !== undefined && Object.keys(signers).length > 0) {
    throw new UsageError('cannot specify --cluster-signing-{cert,key}-file and other --cluster-signing-*-file flags at the same time')
  }
  if (ca === undefined && Object.keys(signers).length === 0) return undefined
  const duration = typeof flags['cluster-signing-duration'] === 'number' ? flags['cluster-signing-duration'] : section.ClusterSigningDuration as number | undefined
  return { ...(ca === undefined ? {} : { ca }), ...(Object.keys(signers).length === 0 ? {} : { signers }), ...(duration === undefined ? {} : { durationMs: duration }) }
}
