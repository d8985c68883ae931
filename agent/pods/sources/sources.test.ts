import t from 'tap'
import { mkdtempSync, writeFileSync, rmSync, unlinkSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { createFileSource } from './file-source.js'
import { createUrlSource } from './url-source.js'
import type { Pod, PodSource } from '../pod-types.js'

const manifest = (name: string, image = 'x:1') => `apiVersion: v1\nkind: Pod\nmetadata: {name: ${name}}\nspec: {containers: [{name: c, image: "${image}"}]}\n`

function recorder () {
  const sets: Array<{ source: PodSource; names: string[]; uids: string[] }> = []
  const warnings: string[] = []
  return {
    sets,
    warnings,
    sink: { set (source: PodSource, pods: Pod[]) { sets.push({ source, names: pods.map(p => p.metadata.name).sort(), uids: pods.map(p => p.metadata.uid) }) } },
    logger: { info () {}, warn (o: object, m?: string) { warnings.push(`${m ?? ""} ${JSON.stringify(o)}`) } }
  }
}

t.test('the file source reads a folder, ignores dot files, skips a bad manifest and reacts to changes', async t => {
  const dir = mkdtempSync(join(tmpdir(), 'orch-static-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  writeFileSync(join(dir, 'a.yaml'), manifest('a'))
  writeFileSync(join(dir, '.hidden.yaml'), manifest('hidden'))
  writeFileSync(join(dir, 'broken.yaml'), 'kind: [')
  const r = recorder()
  const src = createFileSource({ path: dir, nodeName: 'n1', checkFrequencyMs: 60_000, sink: r.sink, logger: r.logger })
  await src.refresh()
  t.same(r.sets.at(-1)?.names, ['a-n1'])
  t.equal(r.sets.at(-1)?.source, 'file')
  t.match(r.warnings.join('\n'), /broken\.yaml/)
  const firstUid = r.sets.at(-1)!.uids[0]
  writeFileSync(join(dir, 'a.yaml'), manifest('a', 'x:2'))
  writeFileSync(join(dir, 'b.json'), JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'b' }, spec: { containers: [{ name: 'c', image: 'y' }] } }))
  await src.refresh()
  t.same(r.sets.at(-1)?.names, ['a-n1', 'b-n1'])
  t.not(r.sets.at(-1)!.uids.includes(firstUid!), true, 'the edited pod has a new uid')
  const count = r.sets.length
  await src.refresh()
  t.equal(r.sets.length, count, 'no report when nothing changed')
  unlinkSync(join(dir, 'b.json'))
  await src.refresh()
  t.same(r.sets.at(-1)?.names, ['a-n1'])
})

t.test('the file source accepts a single file path', async t => {
  const dir = mkdtempSync(join(tmpdir(), 'orch-static-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const file = join(dir, 'only.yaml')
  writeFileSync(file, manifest('only'))
  const r = recorder()
  await createFileSource({ path: file, nodeName: 'n1', checkFrequencyMs: 60_000, sink: r.sink, logger: r.logger }).refresh()
  t.same(r.sets.at(-1)?.names, ['only-n1'])
})

t.test('the URL source sends --manifest-url-header values and keeps its pods when the URL fails', async t => {
  let status = 200
  let body = manifest('remote')
  const seen: Array<string | string[] | undefined> = []
  const server = createServer((req, res) => {
    seen.push(req.headers['x-token'])
    res.writeHead(status)
    res.end(body)
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => { server.close() })
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/pods`
  const r = recorder()
  const src = createUrlSource({ url, headers: { 'X-Token': ['a', 'b'] }, nodeName: 'n1', checkFrequencyMs: 60_000, sink: r.sink, logger: r.logger })
  await src.refresh()
  t.same(r.sets.at(-1)?.names, ['remote-n1'])
  t.equal(r.sets.at(-1)?.source, 'http')
  t.same(seen[0], 'a, b', 'both header values were sent, in order')
  status = 500
  await src.refresh()
  t.equal(r.sets.length, 1, 'an error keeps the previous set')
  status = 200
  body = 'kind: ['
  await src.refresh()
  t.equal(r.sets.length, 1, 'a bad manifest keeps the previous set')
  t.match(r.warnings.join('\n'), /skipping pod manifest/)
})

t.test('the file source reports an empty set once, so the orchlet knows the source is ready', async t => {
  const dir = mkdtempSync(join(tmpdir(), 'orch-static-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const r = recorder()
  const src = createFileSource({ path: join(dir, 'missing'), nodeName: 'n1', checkFrequencyMs: 60_000, sink: r.sink, logger: r.logger })
  await src.refresh()
  await src.refresh()
  t.same(r.sets, [{ source: 'file', names: [], uids: [] }])
})
