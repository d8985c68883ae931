// The --cluster-signing-* flags and the CSRSigningController config section become the csrsigning settings.
import t from 'tap'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createCa } from '../pki/certs.js'
import { parseFlags } from './args.js'
import { CSR_SIGNING_FLAGS, loadCsrSigningSettings } from './csr-signing-flags.js'

const dir = mkdtempSync(join(tmpdir(), 'orch-csr-flags-'))
t.teardown(() => rmSync(dir, { recursive: true, force: true }))
const ca = await createCa('flags-ca')
writeFileSync(join(dir, 'ca.crt'), ca.certPem)
writeFileSync(join(dir, 'ca.key'), ca.key.pem)
const flags = (...argv: string[]): ReturnType<typeof parseFlags>['flags'] => parseFlags(argv, CSR_SIGNING_FLAGS).flags

t.test('the cluster pair signs for every signer; the duration comes from the flag or the config', async t => {
  const s = await loadCsrSigningSettings(flags('--cluster-signing-cert-file', join(dir, 'ca.crt'), '--cluster-signing-key-file', join(dir, 'ca.key'), '--cluster-signing-duration', '2h'))
  t.equal(s?.ca?.certPem, ca.certPem)
  t.equal(s?.durationMs, 7200_000)
  const fromConfig = await loadCsrSigningSettings(flags(), { ClusterSigningCertFile: join(dir, 'ca.crt'), ClusterSigningKeyFile: join(dir, 'ca.key'), ClusterSigningDuration: 60_000 })
  t.equal(fromConfig?.durationMs, 60_000)
  t.equal(await loadCsrSigningSettings(flags()), undefined, 'nothing configured: no signing')
})

t.test('per-signer pairs name their signer; mixing them with the cluster pair or giving half a pair is refused', async t => {
  const s = await loadCsrSigningSettings(flags(), { OrchletServingSignerConfiguration: { CertFile: join(dir, 'ca.crt'), KeyFile: join(dir, 'ca.key') } })
  t.same(Object.keys(s?.signers ?? {}), ['orch.io/orchlet-serving'])
  t.equal(s?.ca, undefined)
  await t.rejects(loadCsrSigningSettings(flags('--cluster-signing-cert-file', join(dir, 'ca.crt'), '--cluster-signing-key-file', join(dir, 'ca.key'),
    '--cluster-signing-legacy-unknown-cert-file', join(dir, 'ca.crt'), '--cluster-signing-legacy-unknown-key-file', join(dir, 'ca.key'))),
  { name: 'UsageError', message: /cannot specify --cluster-signing-\{cert,key\}-file and other --cluster-signing-\*-file flags at the same time/ })
  await t.rejects(loadCsrSigningSettings(flags('--cluster-signing-cert-file', join(dir, 'ca.crt'))), { message: /must be given together/ })
  await t.rejects(loadCsrSigningSettings(flags('--cluster-signing-cert-file', join(dir, 'nope'), '--cluster-signing-key-file', join(dir, 'ca.key'))), { name: 'UsageError', message: /ENOENT/ })
})
