import t from 'tap'
import { acceptsJson, bodyFormat, negotiateResponse, parseAccept, splitOutsideQuotes } from './negotiate.js'
import { StatusError } from '../errors/status-error.js'
import { Messages } from './protobuf/messages.js'

t.test('orders Accept ranges by q and drops q=0', async t => {
  const r = parseAccept('application/yaml;q=0.5, application/json, text/html;q=0')
  t.same(r.map(x => x.subtype), ['json', 'yaml'])
})

t.test('picks the response form kubectl and clients ask for', async t => {
  const cases: Array<[string | undefined, boolean, unknown]> = [
    [undefined, true, { form: 'json' }],
    ['*/*', true, { form: 'json' }],
    ['application/yaml', true, { form: 'yaml' }],
    ['application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json', true, { form: 'table', tableGroup: 'meta.k8s.io' }],
    ['application/json;as=Table;g=meta.orch.io;v=v1, application/json', true, { form: 'table', tableGroup: 'meta.orch.io' }],
    ['application/json;as=Table;v=v1;g=meta.k8s.io, application/json', false, { form: 'json' }],
    ['application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io, application/json', true, { form: 'json' }],
    ['application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io', true, { form: 'metadata', metaGroup: 'meta.k8s.io' }],
    ['application/vnd.kubernetes.protobuf, application/json', true, { form: 'json' }],
    ['application/json;as=Table;v=v1beta1;g=meta.k8s.io, */*;q=0.1', true, { form: 'json' }]
  ]
  for (const [accept, allowTable, want] of cases) t.same(negotiateResponse(accept, { allowTable }), want, String(accept))
})

t.test('protobuf is picked under both names when the kind has messages, skipped otherwise', async t => {
  const protobuf = new Messages()
  t.same(negotiateResponse('application/vnd.kubernetes.protobuf, application/json', { allowTable: true, protobuf }), { form: 'protobuf', messages: protobuf, contentType: 'application/vnd.kubernetes.protobuf' })
  t.same(negotiateResponse('application/vnd.orch.protobuf', { allowTable: false, protobuf }), { form: 'protobuf', messages: protobuf, contentType: 'application/vnd.orch.protobuf' }, 'answered under the name asked for')
  t.same(negotiateResponse('application/vnd.kubernetes.protobuf;as=Table;v=v1;g=meta.k8s.io, application/json', { allowTable: true, protobuf }), { form: 'json' })
  const refused = negotiateResponse('application/vnd.kubernetes.protobuf', { allowTable: true })
  t.ok(refused instanceof StatusError && refused.code === 406)
})

t.test('protobuf given as a function answers as given as a value, and is asked only when it decides', async t => {
  const protobuf = new Messages()
  const accepts = [undefined, '*/*', 'application/json', 'application/yaml', 'text/html', 'application/vnd.kubernetes.protobuf',
    'application/vnd.orch.protobuf, application/json', 'application/json;as=Table;v=v1;g=meta.k8s.io, application/vnd.kubernetes.protobuf']
  for (const accept of accepts) {
    for (const given of [protobuf, undefined]) {
      let asked = 0
      const lazy = negotiateResponse(accept, { allowTable: true, protobuf: () => { asked++; return given } })
      const eager = negotiateResponse(accept, { allowTable: true, protobuf: given })
      t.same(lazy, eager, `${String(accept)} with${given === undefined ? 'out' : ''} messages`)
      if (!String(accept).includes('protobuf') && !(eager instanceof StatusError)) t.equal(asked, 0, `${String(accept)}: not asked`)
    }
  }
})

t.test('answers 406 when nothing acceptable is served', async t => {
  for (const a of ['application/vnd.orch.protobuf', 'text/html', 'application/json;as=Table;v=v1;g=other.io']) {
    const r = negotiateResponse(a, { allowTable: true })
    t.ok(r instanceof StatusError && r.code === 406, a)
  }
  t.notOk(acceptsJson('application/com.github.proto-openapi.spec.v2@v1.0+protobuf'))
  t.ok(acceptsJson('application/com.github.proto-openapi.spec.v2@v1.0+protobuf, application/json'))
})

t.test('reads JSON, YAML and protobuf bodies, 415 for anything else', async t => {
  t.equal(bodyFormat(undefined), 'json')
  t.equal(bodyFormat('application/json; charset=utf-8'), 'json')
  t.equal(bodyFormat('application/yaml'), 'yaml')
  t.equal(bodyFormat('application/vnd.kubernetes.protobuf'), 'protobuf')
  t.equal(bodyFormat('application/vnd.orch.protobuf'), 'protobuf')
  for (const ct of ['text/plain', 'application/merge-patch+json']) {
    const r = bodyFormat(ct)
    t.ok(r instanceof StatusError && r.code === 415, ct)
  }
})

t.test('splitOutsideQuotes splits as a scan honouring quotes does, with or without quotes', async t => {
  const scan = (s: string, sep: string): string[] => {
    const out: string[] = []
    let cur = ''
    let quoted = false
    for (const ch of s) {
      if (ch === '"') quoted = !quoted
      if (ch === sep && !quoted) { out.push(cur); cur = '' } else cur += ch
    }
    out.push(cur)
    return out
  }
  const alphabet = [',', ';', '"', 'a', '=', ' ', '😀']
  const mismatches: string[] = []
  const visit = (s: string): void => {
    for (const sep of [',', ';']) if (JSON.stringify(splitOutsideQuotes(s, sep)) !== JSON.stringify(scan(s, sep))) mismatches.push(s)
    if ([...s].length < 6) for (const c of alphabet) visit(s + c)
  }
  visit('')
  t.same(mismatches.slice(0, 10), [])
  t.same(splitOutsideQuotes('application/json;as=Table;g="a;b"', ';'), ['application/json', 'as=Table', 'g="a;b"'])
})
