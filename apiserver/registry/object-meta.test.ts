import t from 'tap'
import { sameContent } from './object-meta.js'

t.test('sameContent looks past metadata, apiVersion and kind, and past status when told to', async t => {
  const a = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'a', labels: { x: '1' } }, spec: { replicas: 1, paused: false }, status: { replicas: 0 } }
  const b = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'a' }, spec: { paused: false, replicas: 1 }, status: { replicas: 3 } }
  t.ok(sameContent(a, b, true), 'member order and metadata do not count')
  t.notOk(sameContent(a, b, false), 'status counts unless excluded')
  t.notOk(sameContent(a, { ...b, spec: { replicas: 2, paused: false } }, true), 'a spec change counts')
  t.notOk(sameContent(a, { ...b, extra: {} }, true), 'a new top-level member counts')
})
