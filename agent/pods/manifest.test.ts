import t from 'tap'
import { decodeManifest, toStaticPod, defaultPullPolicy, ManifestError } from './manifest.js'

const good = `apiVersion: v1
kind: Pod
metadata: {name: web}
spec:
  containers: [{name: main, image: "nginx:1.25"}]
`

t.test('turns a manifest into a static pod bound to the node, in namespace default, with a content uid', async t => {
  const [obj] = decodeManifest(good, '/m/web.yaml')
  const pod = toStaticPod(obj!, 'file', '/m/web.yaml', 'node-a')
  t.equal(pod.metadata.name, 'web-node-a')
  t.equal(pod.metadata.namespace, 'default')
  t.equal(pod.spec.nodeName, 'node-a')
  t.equal(pod.metadata.annotations?.['orch.io/config.source'], 'file')
  t.equal(pod.spec.restartPolicy, 'Always')
  t.equal(pod.spec.containers[0]!.imagePullPolicy, 'IfNotPresent')
  const again = toStaticPod(decodeManifest(good, '/m/web.yaml')[0]!, 'file', '/m/web.yaml', 'node-a')
  t.equal(again.metadata.uid, pod.metadata.uid, 'the same content gives the same uid')
  const changed = toStaticPod(decodeManifest(good.replace('1.25', '1.26'), '/m/web.yaml')[0]!, 'file', '/m/web.yaml', 'node-a')
  t.not(changed.metadata.uid, pod.metadata.uid, 'an edit gives a new uid')
})

t.test('reads JSON manifests and PodLists', async t => {
  const list = JSON.stringify({ apiVersion: 'v1', kind: 'PodList', items: [JSON.parse(JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'a' }, spec: { containers: [{ name: 'c', image: 'x' }] } }))] })
  t.equal(decodeManifest(list, 'l.json').length, 1)
})

t.test('defaults imagePullPolicy to Always for :latest and untagged images', async t => {
  t.equal(defaultPullPolicy('busybox'), 'Always')
  t.equal(defaultPullPolicy('busybox:latest'), 'Always')
  t.equal(defaultPullPolicy('registry:5000/busybox'), 'Always')
  t.equal(defaultPullPolicy('registry:5000/busybox:1.36'), 'IfNotPresent')
  t.equal(defaultPullPolicy('busybox@sha256:abc'), 'IfNotPresent')
})

const bad: Array<[string, string, RegExp]> = [
  ['broken YAML', 'kind: Pod\n  bad: [', /invalid pod manifest f: /],
  ['a duplicate key', 'kind: Pod\nkind: Pod\n', /invalid pod manifest f: .*[Mm]ap keys must be unique/],
  ['a scalar', '42', /must be a Pod object/],
  ['another kind', 'apiVersion: v1\nkind: Service\nmetadata: {name: a}\nspec: {}', /kind must be Pod, not "Service"/],
  ['another apiVersion', 'apiVersion: v2\nkind: Pod\nmetadata: {name: a}\nspec: {}', /apiVersion must be v1/],
  ['no name', 'apiVersion: v1\nkind: Pod\nmetadata: {}\nspec: {containers: [{name: c, image: x}]}', /metadata.name: Required value/],
  ['a bad name', 'apiVersion: v1\nkind: Pod\nmetadata: {name: Web_1}\nspec: {containers: [{name: c, image: x}]}', /metadata.name: Invalid value: "Web_1"/],
  ['no containers', 'apiVersion: v1\nkind: Pod\nmetadata: {name: a}\nspec: {containers: []}', /spec.containers: Required value/],
  ['a container without image', 'apiVersion: v1\nkind: Pod\nmetadata: {name: a}\nspec: {containers: [{name: c}]}', /spec.containers\[0\].image: Required value/],
  ['duplicate container names', 'apiVersion: v1\nkind: Pod\nmetadata: {name: a}\nspec: {containers: [{name: c, image: x}, {name: c, image: y}]}', /spec.containers\[1\].name: Duplicate value: "c"/],
  ['a bad restartPolicy', 'apiVersion: v1\nkind: Pod\nmetadata: {name: a}\nspec: {restartPolicy: Sometimes, containers: [{name: c, image: x}]}', /spec.restartPolicy: Unsupported value: "Sometimes"/],
  ['a non-string command', 'apiVersion: v1\nkind: Pod\nmetadata: {name: a}\nspec: {containers: [{name: c, image: x, command: [1]}]}', /command: must be a list of strings/]
]

for (const [what, text, message] of bad) {
  t.test(`rejects a manifest with ${what}`, async t => {
    let caught: unknown
    try { for (const obj of decodeManifest(text, 'f')) toStaticPod(obj, 'file', 'f', 'n') } catch (err) { caught = err }
    t.ok(caught instanceof ManifestError, 'a ManifestError')
    t.match((caught as Error).message, message)
  })
}
