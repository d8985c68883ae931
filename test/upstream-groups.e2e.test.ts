// Standard manifests that name Kubernetes' groups (apiextensions.k8s.io, coordination.k8s.io) apply unmodified:
// the *.orch.io groups are served under those names too, as the same objects.
import t from 'tap'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { runKubectl, startOrch } from './orch-process.js'

const dir = mkdtempSync(join(tmpdir(), 'orch-upstream-groups-'))
t.teardown(() => rmSync(dir, { recursive: true, force: true }))

const CRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: crontabs.stable.example.com
spec:
  group: stable.example.com
  scope: Namespaced
  names: {plural: crontabs, singular: crontab, kind: CronTab, shortNames: [ct]}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              cronSpec: {type: string}
              replicas: {type: integer}
`
const CR = `apiVersion: stable.example.com/v1
kind: CronTab
metadata: {name: nightly, namespace: default}
spec: {cronSpec: "0 3 * * *", replicas: 2}
---
apiVersion: coordination.k8s.io/v1
kind: Lease
metadata: {name: leader, namespace: default}
spec: {holderIdentity: me}
`

t.test('a CRD and a Lease in Kubernetes group names apply unmodified and are the same objects', async t => {
  const orch = await startOrch(join(dir, 'data'))
  t.teardown(() => orch.stop())
  const k = async (...args: string[]): Promise<{ code: number, stdout: string, stderr: string }> => await runKubectl(orch.kubeconfig, join(dir, 'cache'), args)
  const crd = join(dir, 'crd.yaml')
  const cr = join(dir, 'cr.yaml')
  writeFileSync(crd, CRD)
  writeFileSync(cr, CR)
  let r = await k('apply', '-f', crd)
  t.equal(r.code, 0, r.stderr)
  t.match(r.stdout, 'customresourcedefinition.apiextensions.k8s.io/crontabs.stable.example.com created')
  r = await k('wait', '--for=condition=Established', 'crd/crontabs.stable.example.com', '--timeout=30s')
  t.equal(r.code, 0, r.stderr)
  r = await k('apply', '-f', cr)
  t.equal(r.code, 0, r.stderr)
  t.match(r.stdout, 'crontab.stable.example.com/nightly created')
  t.match(r.stdout, 'lease.coordination.k8s.io/leader created')
  r = await k('get', 'crd', 'crontabs.stable.example.com', '-o', 'jsonpath={.apiVersion} {.metadata.uid}')
  t.equal(r.code, 0, r.stderr)
  t.notMatch(r.stderr, 'could also match', 'short names are not ambiguous')
  const [apiVersion, uid] = r.stdout.split(' ')
  t.equal(apiVersion, 'apiextensions.k8s.io/v1')
  const own = await k('get', 'customresourcedefinitions.apiextensions.orch.io', 'crontabs.stable.example.com', '-o', 'jsonpath={.apiVersion} {.metadata.uid}')
  t.equal(own.stdout, `apiextensions.orch.io/v1 ${uid}`, 'the same object under orch\'s group name')
  r = await k('get', 'leases.coordination.orch.io', 'leader', '-o', 'jsonpath={.spec.holderIdentity}')
  t.equal(r.stdout, 'me')
  r = await k('apply', '--server-side', '-f', crd)
  t.equal(r.code, 0, r.stderr)
  t.match(r.stdout, 'serverside-applied')
})
