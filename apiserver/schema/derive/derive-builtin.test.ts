import t from 'tap'
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { deriveDefinitions, orchGroup, orchName, readSwagger, referenceDocument } from './derive-builtin.js'

t.test('renames Kubernetes names to orch names', async (t) => {
  t.equal(orchName('io.k8s.api.core.v1.PodSpec'), 'io.orch.api.core.v1.PodSpec')
  t.equal(orchGroup('coordination.k8s.io'), 'coordination.orch.io')
  t.equal(orchGroup('apps'), 'apps')
  t.equal(orchGroup('k8s.io'), 'orch.io')
})

t.test('converts swagger 2 specifics into structural schemas without descriptions', async (t) => {
  const defs = deriveDefinitions({
    definitions: {
      'io.k8s.api.x.v1.Thing': {
        description: 'long text',
        type: 'object',
        required: ['port'],
        'x-kubernetes-group-version-kind': [{ group: 'x.k8s.io', kind: 'Thing', version: 'v1' }],
        'x-kubernetes-unions': [{}],
        properties: {
          port: { $ref: '#/definitions/io.k8s.apimachinery.pkg.util.intstr.IntOrString', description: 'p' },
          legacy: { type: 'string', format: 'int-or-string' },
          items: { type: 'array', items: { type: 'string' }, 'x-kubernetes-list-type': 'set' },
          default: { type: 'object', additionalProperties: { $ref: '#/definitions/io.k8s.apimachinery.pkg.api.resource.Quantity' } },
        },
      },
      'io.k8s.apimachinery.pkg.util.intstr.IntOrString': { type: 'string', format: 'int-or-string', description: 'x' },
      'io.k8s.apimachinery.pkg.api.resource.Quantity': { type: 'string', description: 'q' },
      'io.k8s.apimachinery.pkg.apis.meta.v1.Time': { type: 'string', format: 'date-time' },
    },
  })
  t.same(defs['io.orch.api.x.v1.Thing'], {
    type: 'object',
    required: ['port'],
    'x-orch-group-version-kind': [{ group: 'x.orch.io', kind: 'Thing', version: 'v1' }],
    properties: {
      port: { $ref: 'io.orch.apimachinery.pkg.util.intstr.IntOrString' },
      legacy: { 'x-orch-int-or-string': true },
      items: { type: 'array', items: { type: 'string' }, 'x-orch-list-type': 'set' },
      default: { type: 'object', additionalProperties: { $ref: 'io.orch.apimachinery.pkg.api.resource.Quantity' } },
    },
  })
  t.same(defs['io.orch.apimachinery.pkg.api.resource.Quantity'], { 'x-orch-int-or-string': true, format: 'quantity' })
  t.same(defs['io.orch.apimachinery.pkg.apis.meta.v1.Time'], { type: 'string', format: 'date-time', nullable: true })
})

const committed = fileURLToPath(new URL('../builtin/definitions.json', import.meta.url))
t.test('the committed definitions.json is what the script derives from the carried document', async (t) => {
  const derived = deriveDefinitions(readSwagger(referenceDocument))
  t.same(JSON.parse(readFileSync(committed, 'utf8')), derived)
})
