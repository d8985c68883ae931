// Strict decoding of configuration files and Go durations, both ways.

import t from 'tap'
import { decodeConfig, goDurationMs, goDurationString, type Shape } from './decode.js'

t.test('Go durations parse and print as Go does', async (t) => {
  t.equal(goDurationMs('0'), 0)
  t.equal(goDurationMs('1m30s'), 90_000)
  t.equal(goDurationMs('1.5h'), 5_400_000)
  t.equal(goDurationMs('250ms'), 250)
  t.equal(goDurationMs('-2s'), -2000)
  t.equal(goDurationMs('1h2m3.5s'), 3_723_500)
  for (const bad of ['', '5', 's', '5 m', '1x', '--1s']) t.throws(() => goDurationMs(bad), { message: `time: invalid duration ${JSON.stringify(bad)}` }, bad)
  t.equal(goDurationString(0), '0s')
  t.equal(goDurationString(30_000), '30s')
  t.equal(goDurationString(300_000), '5m0s')
  t.equal(goDurationString(3_723_500), '1h2m3.5s')
  t.equal(goDurationString(500), '500ms')
  t.equal(goDurationString(-60_000), '-1m0s')
})

t.test('fields are checked for their types; null fields are left out', async (t) => {
  const shape: Shape = { a: 'string', b: 'boolean', d: 'duration', l: 'string[]', o: { x: 'string' }, items: [{ y: 'string' }] }
  const head = 'apiVersion: apiserver.orch.io/v1alpha1\nkind: K\n'
  t.same(decodeConfig(head + 'a: s\nb: true\nd: 1s\nl: [x, y]\no: {x: z}\nitems: [{y: w}]\n', 'K', shape), { a: 's', b: true, d: 1000, l: ['x', 'y'], o: { x: 'z' }, items: [{ y: 'w' }] })
  t.same(decodeConfig(head + 'a: null\n', 'K', shape), {})
  t.same(decodeConfig('{"apiVersion": "apiserver.config.k8s.io/v1beta1", "kind": "K", "a": "json"}', 'K', shape), { a: 'json' }, 'JSON is YAML')
  t.throws(() => decodeConfig(head + 'b: "yes"\n', 'K', shape), { message: 'b: cannot decode string into a field of type boolean' })
  t.throws(() => decodeConfig(head + 'l: [1]\n', 'K', shape), { message: 'l: cannot decode into a list of strings' })
  t.throws(() => decodeConfig(head + 'items: {y: w}\n', 'K', shape), { message: 'items: cannot decode object into a list' })
  t.throws(() => decodeConfig(head + 'items: [{y: w, z: 1}]\no: {q: 1}\n', 'K', shape), { message: 'strict decoding error: unknown field "items[0].z", unknown field "o.q"' })
  t.throws(() => decodeConfig(head + 'toString: x\n', 'K', shape), { message: 'strict decoding error: unknown field "toString"' }, 'names of Object.prototype are unknown fields too')
  t.throws(() => decodeConfig('- a\n', 'K', shape), { message: /does not hold an object/ })
  t.throws(() => decodeConfig('apiVersion: apiserver.orch.io/v1alpha1\n', 'K', shape), { message: /^Object 'Kind' is missing in/ })
})
