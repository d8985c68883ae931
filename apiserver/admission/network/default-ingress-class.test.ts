import t from 'tap'
import { body, ctx } from '../../registry/testing.js'
import { admissionFixture } from '../testing.js'

const ingressClass = (name: string, annotations: Record<string, string> = {}): Record<string, unknown> =>
  ({ apiVersion: 'networking.orch.io/v1', kind: 'IngressClass', metadata: { name, annotations }, spec: { controller: 'orch.io/ingress' } })

const ingress = (name: string, spec: Record<string, unknown> = {}, annotations: Record<string, string> = {}, group = 'networking.orch.io'): Record<string, unknown> => ({
  apiVersion: `${group}/v1`, kind: 'Ingress', metadata: { name, annotations },
  spec: { defaultBackend: { service: { name: 'web', port: { number: 80 } } }, ...spec }
})

t.test('DefaultIngressClass gives an Ingress naming no class the newest default class', async t => {
  let now = Date.parse('2026-01-01T00:00:00Z')
  const fx = await admissionFixture(['DefaultIngressClass'], {}, { clock: { now: () => now } })
  t.teardown(() => fx.close())
  const classes = fx.registry.handler('networking.orch.io', 'v1', 'ingressclasses')!
  const ingresses = fx.registry.handler('networking.orch.io', 'v1', 'ingresses')!
  const none = await ingresses.create(ctx(), 'default', body(ingress('none-yet')))
  t.equal((none.object as any).spec.ingressClassName, undefined, 'no default class: nothing set')
  await classes.create(ctx(), '', body(ingressClass('plain')))
  await classes.create(ctx(), '', body(ingressClass('nginx', { 'ingressclass.kubernetes.io/is-default-class': 'true' })))
  const made = await ingresses.create(ctx(), 'default', body(ingress('a')))
  t.equal((made.object as any).spec.ingressClassName, 'nginx')
  now += 5000
  await classes.create(ctx(), '', body(ingressClass('traefik', { 'ingressclass.orch.io/is-default-class': 'true' })))
  const newer = await ingresses.create(ctx(), 'default', body(ingress('b')))
  t.equal((newer.object as any).spec.ingressClassName, 'traefik', 'the newest default wins; the orch spelling counts')
  const k8s = fx.registry.handler('networking.k8s.io', 'v1', 'ingresses')!
  const upstream = await k8s.create(ctx(), 'default', body(ingress('c', {}, {}, 'networking.k8s.io')))
  t.equal((upstream.object as any).spec.ingressClassName, 'traefik', 'through networking.k8s.io too')
})

t.test('DefaultIngressClass leaves an Ingress naming its class by field or by the deprecated annotation alone', async t => {
  const fx = await admissionFixture(['DefaultIngressClass'])
  t.teardown(() => fx.close())
  await fx.registry.handler('networking.orch.io', 'v1', 'ingressclasses')!.create(ctx(), '',
    body(ingressClass('nginx', { 'ingressclass.kubernetes.io/is-default-class': 'true' })))
  const ingresses = fx.registry.handler('networking.orch.io', 'v1', 'ingresses')!
  const named = await ingresses.create(ctx(), 'default', body(ingress('a', { ingressClassName: 'other' })))
  t.equal((named.object as any).spec.ingressClassName, 'other')
  const annotated = await ingresses.create(ctx(), 'default', body(ingress('b', {}, { 'kubernetes.io/ingress.class': 'haproxy' })))
  t.equal((annotated.object as any).spec.ingressClassName, undefined)
  const created = await ingresses.create(ctx(), 'default', body(ingress('c')))
  const obj = created.object as any
  obj.spec.rules = [{ host: 'x.example' }]
  delete obj.spec.ingressClassName
  const updated = await ingresses.update(ctx(), 'default', 'c', body(obj))
  t.equal((updated.object as any).spec.ingressClassName, undefined, 'only creates are defaulted')
})
