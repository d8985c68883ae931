// Copies of request and response bodies for audit events, over real HTTP.
import t, { type Test } from 'tap'
import { createServer, request, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { gzipSync } from 'node:zlib'
import protobuf from 'protobufjs/minimal.js'
import { readBody } from './decode.js'
import { ENVELOPE_PREFIX, Messages } from './protobuf/messages.js'
import { copyRequestBody, copyResponseBody, decodeCopy, type BodyCopy } from './audit-capture.js'

async function serve (t: Test, handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<number> {
  const server = createServer(handler)
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => server.close())
  return (server.address() as AddressInfo).port
}

async function post (port: number, body: string | Buffer, headers: Record<string, string> = {}): Promise<string> {
  return await new Promise((resolve, reject) => {
    const req = request({ port, host: '127.0.0.1', method: 'POST', headers }, res => {
      const chunks: Buffer[] = []
      res.on('data', c => chunks.push(c))
      res.on('end', () => resolve(Buffer.concat(chunks).toString()))
    })
    req.on('error', reject)
    req.end(body)
  })
}

t.test('the request body is copied as the handler reads it, and the handler still gets all of it', async t => {
  let copy: BodyCopy | undefined
  const port = await serve(t, (req, res) => {
    copy = copyRequestBody(req, 1 << 20)
    // The handler starts reading later, as a real one does after routing.
    setTimeout(() => { void readBody(req).then(b => res.end(b)) }, 10)
  })
  const big = JSON.stringify({ kind: 'ConfigMap', data: { a: 'x'.repeat(200_000) } })
  t.equal(await post(port, big, { 'content-type': 'application/json' }), big)
  t.same(await decodeCopy(copy?.bytes(), 'application/json'), JSON.parse(big))
})

t.test('a body nobody reads is not read by the copy either', async t => {
  let copy: BodyCopy | undefined
  const port = await serve(t, (req, res) => { copy = copyRequestBody(req, 1024); res.end('ok') })
  await post(port, 'unread')
  t.equal(copy?.bytes()?.length, 0)
})

t.test('a body past the limit is not kept', async t => {
  let copy: BodyCopy | undefined
  const port = await serve(t, (req, res) => { copy = copyRequestBody(req, 10); void readBody(req).then(() => res.end()) })
  await post(port, '{"long": "more than ten bytes"}')
  t.equal(copy?.overflow, true)
  t.equal(copy?.bytes(), undefined)
})

t.test('the response body is copied from write and end, gzip undone', async t => {
  let copy: BodyCopy | undefined
  const obj = { kind: 'PodList', items: [{ metadata: { name: 'p' } }] }
  const port = await serve(t, (_req, res) => {
    copy = copyResponseBody(res, 1 << 20)
    const z = gzipSync(JSON.stringify(obj))
    res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' })
    res.write(z.subarray(0, 5))
    res.end(z.subarray(5))
  })
  await post(port, '')
  t.same(await decodeCopy(copy?.bytes(), 'application/json', 'gzip'), obj)
})

t.test('YAML and patch media types decode; protobuf without messages and garbage do not', async t => {
  t.same(await decodeCopy(Buffer.from('kind: Pod\nmetadata: {name: p}\n'), 'application/yaml'), { kind: 'Pod', metadata: { name: 'p' } })
  t.same(await decodeCopy(Buffer.from('{"spec":{"replicas":2}}'), 'application/merge-patch+json'), { spec: { replicas: 2 } })
  t.same(await decodeCopy(Buffer.from('[{"op":"remove","path":"/a"}]'), 'application/json-patch+json'), [{ op: 'remove', path: '/a' }])
  t.equal(await decodeCopy(Buffer.from([0x6b, 0x38, 0x73, 0]), 'application/vnd.kubernetes.protobuf'), undefined)
  t.equal(await decodeCopy(Buffer.from('{not json'), 'application/json'), undefined)
  t.equal(await decodeCopy(Buffer.alloc(0), 'application/json'), undefined)
})

t.test('protobuf bodies decode to their JSON form when the messages are given', async t => {
  const str = (w: protobuf.Writer, id: number, v: string): void => { w.uint32((id << 3) | 2).string(v) }
  const nested = (w: protobuf.Writer, id: number, b: Uint8Array): void => { w.uint32((id << 3) | 2).bytes(b) }
  const meta = protobuf.Writer.create(); str(meta, 1, 'cm')
  const cm = protobuf.Writer.create(); nested(cm, 1, meta.finish())
  const tm = protobuf.Writer.create(); str(tm, 1, 'v1'); str(tm, 2, 'ConfigMap')
  const u = protobuf.Writer.create(); nested(u, 1, tm.finish()); nested(u, 2, cm.finish())
  const bytes = Buffer.concat([ENVELOPE_PREFIX, u.finish()])
  t.same(await decodeCopy(bytes, 'application/vnd.kubernetes.protobuf', undefined, new Messages()), { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm' } })
  t.equal(await decodeCopy(bytes, 'application/vnd.kubernetes.protobuf'), undefined)
})
