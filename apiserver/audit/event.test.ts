// Audit event parts: microsecond timestamps, the event user, source IPs, managed fields left out.
import t from 'tap'
import { createServer, request, type IncomingMessage } from 'node:http'
import type { AddressInfo } from 'node:net'
import { eventUser, microTime, sourceIPs, withoutManagedFields } from './event.js'

t.test('timestamps are RFC 3339 with six fraction digits', async t => {
  t.equal(microTime(Date.parse('2026-11-25T09:00:00.123Z') + 0.456), '2026-11-25T09:00:00.123456Z')
  t.equal(microTime(Date.parse('2026-11-25T09:00:00Z')), '2026-11-25T09:00:00.000000Z')
})

t.test('the event user leaves out empty parts', async t => {
  t.same(eventUser({ username: 'a', groups: [] }), { username: 'a' })
  t.same(eventUser({ username: '', groups: [] }), {})
  t.same(eventUser({ username: 'a', uid: '1', groups: ['g'], extra: { k: ['v'] } }), { username: 'a', uid: '1', groups: ['g'], extra: { k: ['v'] } })
})

t.test('managed fields are dropped from objects and list items, without changing the input', async t => {
  const obj = { kind: 'ConfigMap', metadata: { name: 'a', managedFields: [{ manager: 'x' }] } }
  t.same(withoutManagedFields(obj), { kind: 'ConfigMap', metadata: { name: 'a' } })
  t.same(obj.metadata.managedFields, [{ manager: 'x' }])
  t.same(withoutManagedFields({ kind: 'List', items: [obj, { metadata: { name: 'b' } }] }), { kind: 'List', items: [{ kind: 'ConfigMap', metadata: { name: 'a' } }, { metadata: { name: 'b' } }] })
  t.equal(withoutManagedFields('text'), 'text')
})

t.test('source IPs: X-Forwarded-For, then X-Real-Ip, then the peer, each once', async t => {
  const seen: string[][] = []
  const server = createServer((req: IncomingMessage, res) => { seen.push(sourceIPs(req)); res.end() })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => server.close())
  const port = (server.address() as AddressInfo).port
  const get = async (headers: Record<string, string>): Promise<void> => await new Promise((resolve, reject) => {
    request({ port, host: '127.0.0.1', headers }, res => { res.resume(); res.on('end', resolve) }).on('error', reject).end()
  })
  await get({})
  await get({ 'x-forwarded-for': '10.0.0.1, 10.0.0.2', 'x-real-ip': '10.0.0.3' })
  await get({ 'x-forwarded-for': '127.0.0.1' })
  t.same(seen, [['127.0.0.1'], ['10.0.0.1', '10.0.0.2', '10.0.0.3', '127.0.0.1'], ['127.0.0.1']])
})
