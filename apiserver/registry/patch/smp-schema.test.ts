import t from 'tap'
import { builtinDefinitions } from '../../schema/builtin/catalog.js'
import { createResolver } from '../../schema/resolve.js'
import type { ResourceDefinition, StructuralSchema } from '../../schema/types.js'
import { patchSchemaOf, type PatchSchema } from './smp-schema.js'
import { strategicMergePatch } from './strategic-merge-patch.js'
import { SmpError, type JsonMap } from './smp-values.js'

const kind = (k: string): ResourceDefinition => {
  const def = builtinDefinitions().find(d => d.kind === k)
  if (def === undefined) throw new Error(`no built-in ${k}`)
  return def
}

function path (schema: PatchSchema, ...keys: string[]): PatchSchema {
  return keys.reduce((s, k) => s.lookupStruct(k)[0], schema)
}

t.test('the Deployment schema gives the v1.29 strategies and merge keys', async t => {
  const deploy = patchSchemaOf(kind('Deployment'))
  const podSpec = path(deploy, 'spec', 'template', 'spec')
  t.same(podSpec.lookupSlice('containers')[1], { strategies: ['merge'], mergeKey: 'name' })
  t.same(podSpec.lookupSlice('volumes')[1], { strategies: ['merge', 'retainKeys'], mergeKey: 'name' })
  t.same(podSpec.lookupSlice('containers')[0].lookupSlice('ports')[1], { strategies: ['merge'], mergeKey: 'containerPort' })
  t.same(podSpec.lookupSlice('containers')[0].lookupSlice('volumeMounts')[1], { strategies: ['merge'], mergeKey: 'mountPath' })
  t.same(path(deploy, 'spec').lookupStruct('strategy')[1], { strategies: ['retainKeys'], mergeKey: '' }, 'a marker beside a $ref')
  t.same(path(deploy, 'metadata').lookupSlice('finalizers')[1], { strategies: ['merge'], mergeKey: '' })
  t.same(path(deploy, 'metadata').lookupSlice('ownerReferences')[1], { strategies: ['merge'], mergeKey: 'uid' })
  t.same(path(deploy, 'metadata').lookupStruct('labels')[1], { strategies: [], mergeKey: '' })
  t.throws(() => podSpec.lookupStruct('nope'), new SmpError('unable to find api field in struct PodSpec for the json field "nope"'))
})

t.test('Service ports merge by port; Node taints have no strategy (replaced whole), as in v1.29', async t => {
  t.same(path(patchSchemaOf(kind('Node')), 'spec').lookupSlice('taints')[1], { strategies: [], mergeKey: '' })
  t.same(path(patchSchemaOf(kind('Service')), 'spec').lookupSlice('ports')[1], { strategies: ['merge'], mergeKey: 'port' })
})

t.test('free-form fields (a CRD schema inside a built-in) merge without metadata instead of failing', async t => {
  const crd = patchSchemaOf(kind('CustomResourceDefinition'))
  const versions = path(crd, 'spec').lookupSlice('versions')
  t.same(versions[1], { strategies: [], mergeKey: '' })
  const props = path(versions[0], 'schema', 'openAPIV3Schema', 'properties', 'spec')
  t.same(props.lookupStruct('default')[1], { strategies: [], mergeKey: '' })
})

/** Every property of every built-in kind carrying patch markers answers them through the lookups. */
t.test('every built-in kind exposes each of its patch markers through the lookup', async t => {
  let checked = 0
  for (const def of builtinDefinitions()) {
    const resolver = createResolver(def.definitions)
    const seen = new Set<StructuralSchema>()
    const walk = (node: StructuralSchema, schema: PatchSchema, depth: number): void => {
      const s = resolver.resolve(node)
      if (seen.has(s) || depth > 12) return
      seen.add(s)
      for (const [name, prop] of Object.entries(s.properties ?? {})) {
        const p = resolver.resolve(prop)
        const isList = p.type === 'array'
        const [sub, meta] = isList ? schema.lookupSlice(name) : schema.lookupStruct(name)
        const strategy = p['x-orch-patch-strategy']
        if (strategy !== undefined) {
          checked++
          if (meta.strategies.join(',') !== strategy || meta.mergeKey !== (p['x-orch-patch-merge-key'] ?? '')) {
            t.fail(`${def.kind} ${name}: ${JSON.stringify(meta)}`)
          }
        }
        const child = isList ? p.items : p
        if (child !== undefined && (resolver.resolve(child).properties !== undefined)) walk(child, sub, depth + 1)
      }
    }
    walk(def.schema, patchSchemaOf(def), 0)
  }
  t.ok(checked > 100, `${checked} marked fields checked`)
})

t.test('a long merging list is patched in bounded time (no quadratic passes)', async t => {
  const env = Array.from({ length: 20000 }, (_, i) => ({ name: `V${i}`, value: String(i) }))
  const pod: JsonMap = { spec: { containers: [{ name: 'c', image: 'x', env }] } }
  const order = env.map(e => ({ name: e.name })).reverse()
  const patch: JsonMap = { spec: { containers: [{ name: 'c', '$setElementOrder/env': order, env: [{ name: 'V5', value: 'five' }] }] } }
  const out = strategicMergePatch(pod, patch, path(patchSchemaOf(kind('Pod'))))
  const merged = ((out.spec as JsonMap).containers as JsonMap[])[0].env as JsonMap[]
  t.equal(merged.length, 20000)
  t.same(merged[0], { name: 'V19999', value: '19999' })
  t.same(merged.find(e => e.name === 'V5'), { name: 'V5', value: 'five' })
})
