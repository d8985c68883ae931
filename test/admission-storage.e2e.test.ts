// DefaultStorageClass, DefaultIngressClass and PersistentVolumeClaimResize on `orch up`, through the real kubectl.

import t from 'tap'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { runKubectl, startOrch } from './orch-process.js'

const dir = mkdtempSync(join(tmpdir(), 'orch-admission-storage-'))
const orch = await startOrch(join(dir, 'data'), 60_000, ['--orchlet=false'])
t.teardown(async () => { await orch.stop(); rmSync(dir, { recursive: true, force: true }) })
const kubectl = (...args: string[]): ReturnType<typeof runKubectl> => runKubectl(orch.kubeconfig, join(dir, 'cache'), args)

async function ok (...args: string[]): Promise<string> {
  const r = await kubectl(...args)
  if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')} failed (${r.code}): ${r.stderr}`)
  return r.stdout
}

function apply (name: string, yaml: string): Promise<string> {
  const p = join(dir, `${name}.yaml`)
  writeFileSync(p, yaml)
  return ok('apply', '-f', p)
}

t.test('a claim with no class gets the default StorageClass; growing it needs a class allowing expansion', async t => {
  await apply('classes', `apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: standard, annotations: {storageclass.kubernetes.io/is-default-class: "true"}}
provisioner: rancher.io/local-path
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: elastic}
provisioner: rancher.io/local-path
allowVolumeExpansion: true
`)
  const claim = (name: string, cls: string): string => `apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: ${name}}
spec:
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 1Gi}}${cls === '' ? '' : `\n  storageClassName: ${cls}`}
`
  await apply('data', claim('data', ''))
  t.equal(await ok('get', 'pvc', 'data', '-o', 'jsonpath={.spec.storageClassName}'), 'standard')
  await apply('grows', claim('grows', 'elastic'))
  for (const name of ['data', 'grows']) {
    await ok('patch', 'pvc', name, '--subresource=status', '--type=merge', '-p', '{"status":{"phase":"Bound","capacity":{"storage":"1Gi"}}}')
  }
  const grow = (name: string): ReturnType<typeof runKubectl> =>
    kubectl('patch', 'pvc', name, '--type=merge', '-p', '{"spec":{"resources":{"requests":{"storage":"2Gi"}}}}')
  const refused = await grow('data')
  t.equal(refused.code, 1)
  t.match(refused.stderr, 'Error from server (Forbidden): persistentvolumeclaims "data" is forbidden: only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize')
  const grown = await grow('grows')
  t.equal(grown.code, 0, grown.stderr)
  t.equal(await ok('get', 'pvc', 'grows', '-o', 'jsonpath={.spec.resources.requests.storage}'), '2Gi')
})

t.test('an Ingress with no class gets the default IngressClass', async t => {
  await apply('ingress', `apiVersion: networking.k8s.io/v1
kind: IngressClass
metadata: {name: nginx, annotations: {ingressclass.kubernetes.io/is-default-class: "true"}}
spec: {controller: k8s.io/ingress-nginx}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: web}
spec:
  defaultBackend: {service: {name: web, port: {number: 80}}}
`)
  t.equal(await ok('get', 'ingress', 'web', '-o', 'jsonpath={.spec.ingressClassName}'), 'nginx')
})
