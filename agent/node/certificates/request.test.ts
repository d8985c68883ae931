import t, { type Test } from 'tap'
import { X509Certificate } from 'node:crypto'
import { createCsrPem, generatePrivateKey, nodeTemplate, usagesFor } from './csr.js'
import { CLIENT_SIGNER, CsrRejectedError, CsrWaitError, requestCertificate, waitForCertificate, type RequestedCsr } from './request.js'
import { nameOf, newClient, silent, specOf, startCsrApi } from './testing.js'

async function submit (t: Test, expirationSeconds?: number): Promise<{ api: Awaited<ReturnType<typeof startCsrApi>>; req: RequestedCsr; keyPem: string; client: ReturnType<typeof newClient> }> {
  const api = await startCsrApi(t)
  const client = newClient(api.url)
  t.teardown(() => client.close())
  const keyPem = await generatePrivateKey()
  const req = await requestCertificate(client, {
    csrPem: await createCsrPem(keyPem, nodeTemplate('edge-1')), signerName: CLIENT_SIGNER, usages: usagesFor(keyPem, 'client'), generateName: 'node-csr-', expirationSeconds
  })
  return { api, req, keyPem, client }
}

t.test('the request is a CertificateSigningRequest with the signer, usages, lifetime and a generated name', async t => {
  const { api, req } = await submit(t, 600)
  t.match(req.name, /^node-csr-[a-z0-9]{5}$/)
  t.ok(req.uid !== '')
  const [csr] = await api.list()
  t.equal(nameOf(csr), req.name)
  t.equal(specOf(csr).signerName, 'orch.io/orch-apiserver-client-orchlet')
  t.same(specOf(csr).usages, ['digital signature', 'client auth'])
  t.equal(specOf(csr).expirationSeconds, 600)
  t.match(Buffer.from(specOf(csr).request, 'base64').toString(), /^-----BEGIN CERTIFICATE REQUEST-----/)
})

t.test('waiting resolves with the certificate once the request is approved and signed', async t => {
  const { api, req, keyPem, client } = await submit(t)
  const waiting = waitForCertificate(client, req, { timeoutMs: 20_000, pollMs: 5_000, logger: silent })
  await new Promise(resolve => setTimeout(resolve, 200))
  await api.decide(req.name, 'Approved')
  const pem = await waiting
  const cert = new X509Certificate(pem)
  t.equal(cert.subject.split('\n').sort().join(','), 'CN=system:node:edge-1,O=system:nodes')
  t.ok(cert.checkIssued(new X509Certificate(api.ca.certPem)), 'issued by the cluster CA')
  t.ok(cert.checkPrivateKey((await import('node:crypto')).createPrivateKey(keyPem)), 'for our key')
})

t.test('a request already issued resolves at once', async t => {
  const { api, req, client } = await submit(t)
  await api.decide(req.name, 'Approved')
  await api.waitFor(c => (c.status as { certificate?: string } | undefined)?.certificate !== undefined)
  t.match(await waitForCertificate(client, req, { timeoutMs: 5000, logger: silent }), /^-----BEGIN CERTIFICATE-----/)
})

t.test('a denied request rejects with the reason and message', async t => {
  const { api, req, client } = await submit(t)
  const waiting = waitForCertificate(client, req, { timeoutMs: 20_000, pollMs: 5_000, logger: silent })
  await api.decide(req.name, 'Denied', 'NotOurNode', 'unknown machine')
  const err = await waiting.catch((e: unknown) => e)
  t.type(err, CsrRejectedError)
  t.equal((err as Error).message, 'certificate signing request is denied, reason: NotOurNode, message: unknown machine')
  t.equal((err as CsrRejectedError).condition, 'Denied')
})

t.test('a deleted request, or one replaced under the same name, ends the wait', async t => {
  const { req, client } = await submit(t)
  const gone = waitForCertificate(client, req, { timeoutMs: 20_000, pollMs: 5_000, logger: silent })
  await new Promise(resolve => setTimeout(resolve, 200))
  await client.delete(`/apis/certificates.orch.io/v1/certificatesigningrequests/${req.name}`)
  await t.rejects(gone, new CsrWaitError(`csr "${req.name}" was deleted`))
  const { req: other, client: c2 } = await submit(t)
  await t.rejects(waitForCertificate(c2, { ...other, uid: 'another-uid' }, { timeoutMs: 5000 }), new CsrWaitError(`csr "${other.name}" changed UIDs`))
})

t.test('the wait gives up after its timeout, and stops on abort', async t => {
  const { req, client } = await submit(t)
  const started = Date.now()
  await t.rejects(waitForCertificate(client, req, { timeoutMs: 1500, pollMs: 500, logger: silent }), /timed out waiting for certificate signing request node-csr-/)
  t.ok(Date.now() - started < 5000)
  const abort = new AbortController()
  const waiting = waitForCertificate(client, req, { timeoutMs: 60_000, signal: abort.signal })
  setTimeout(() => abort.abort(), 200)
  await t.rejects(waiting, { name: 'AbortError' })
})

t.test('when the watch is unavailable, reading the request again (the poll) still finds the certificate', async t => {
  const { api, req, client } = await submit(t)
  // A client whose watches fail: each watch is refused, so only the polling reads see progress.
  const noWatch = { ...client, watch: async () => { throw new Error('watch refused') } }
  const waiting = waitForCertificate(noWatch, req, { timeoutMs: 20_000, pollMs: 300, logger: silent })
  await new Promise(resolve => setTimeout(resolve, 400))
  await api.decide(req.name, 'Approved')
  t.match(await waiting, /^-----BEGIN CERTIFICATE-----/)
})
