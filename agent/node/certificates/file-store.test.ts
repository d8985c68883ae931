import t from 'tap'
import { lstatSync, readFileSync, readlinkSync, readdirSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { createCa, issueCertificate } from '../../../apiserver/pki/certs.js'
import { createFileStore } from './file-store.js'
import { splitCombinedPem } from './pem.js'

async function pair (cn: string): Promise<{ certPem: string; keyPem: string }> {
  const ca = await createCa('ca')
  return await issueCertificate(ca, { subject: { commonName: cn }, usage: 'client', validitySeconds: 3600 })
}

t.test('update writes a timestamped pem and points -current at it; a later update moves the link', async t => {
  const dir = t.testdir()
  let now = Date.parse('2026-11-25T09:30:05Z')
  const store = createFileStore({ dir, prefix: 'orchlet-client', now: () => now })
  t.equal(store.current(), undefined, 'nothing yet')
  const first = await pair('first')
  const got = store.update(first.certPem, first.keyPem)
  t.equal(store.currentPath, join(dir, 'orchlet-client-current.pem'))
  t.ok(lstatSync(store.currentPath).isSymbolicLink())
  t.equal(readlinkSync(store.currentPath), join(dir, 'orchlet-client-2026-11-25-09-30-05.pem'))
  t.equal(statSync(store.currentPath).mode & 0o777, 0o600)
  t.same(splitCombinedPem(readFileSync(store.currentPath, 'utf8')), { certPem: first.certPem, keyPem: first.keyPem }, 'certificate then key')
  t.equal(store.current()?.certPem, first.certPem)
  t.ok(got.notAfter - got.notBefore > 3500_000, 'validity read from the certificate')

  now += 60_000
  const second = await pair('second')
  store.update(second.certPem, second.keyPem)
  t.equal(readlinkSync(store.currentPath), join(dir, 'orchlet-client-2026-11-25-09-31-05.pem'))
  t.equal(store.current()?.certPem, second.certPem)
  t.same(readdirSync(dir).sort(), ['orchlet-client-2026-11-25-09-30-05.pem', 'orchlet-client-2026-11-25-09-31-05.pem', 'orchlet-client-current.pem'], 'old files stay, no temporaries left')
})

t.test('without a -current file the initial pair (PEM or files) is current', async t => {
  const dir = t.testdir()
  const p = await pair('initial')
  t.equal(createFileStore({ dir, prefix: 'x', initial: p }).current()?.certPem, p.certPem)
  writeFileSync(join(dir, 'c.crt'), p.certPem)
  writeFileSync(join(dir, 'c.key'), p.keyPem)
  const store = createFileStore({ dir, prefix: 'x', initial: { certFile: join(dir, 'c.crt'), keyFile: join(dir, 'c.key') } })
  t.equal(store.current()?.certPem, p.certPem)
  const next = await pair('next')
  store.update(next.certPem, next.keyPem)
  t.equal(store.current()?.certPem, next.certPem, 'the stored pair wins once there is one')
})

t.test('a key that is not the certificate\'s is refused', async t => {
  const a = await pair('a')
  const b = await pair('b')
  const store = createFileStore({ dir: t.testdir(), prefix: 'x' })
  t.throws(() => store.update(a.certPem, b.keyPem), /does not match/)
  t.equal(store.current(), undefined)
  t.equal(createFileStore({ dir: t.testdir(), prefix: 'x', initial: { certPem: a.certPem, keyPem: b.keyPem } }).current(), undefined)
})
