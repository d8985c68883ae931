import t from 'tap'
import { constants, createDeflate, inflateSync } from 'node:zlib'
import { SPDY3_DICTIONARY } from './dictionary.js'
import { adler32, decodeHeaderBlock, encodeHeaderBlock, HeaderCompressor, HeaderDecompressor, MAX_CONNECTION_HEADER_BYTES } from './header-block.js'

t.test('the SPDY/3 dictionary is the 1423 bytes of the draft, named by its Adler-32', async t => {
  t.equal(SPDY3_DICTIONARY.length, 1423)
  t.same([...SPDY3_DICTIONARY.subarray(0, 11)], [0, 0, 0, 7, ...Buffer.from('options')])
  t.equal(SPDY3_DICTIONARY.subarray(-6).toString(), 'enq=0.')
  t.equal(adler32(Buffer.from('Wikipedia')), 0x11e60398, 'adler32 of a known text')
})

t.test('a header block round-trips, names lowercased and several values NUL-joined', async t => {
  const block = encodeHeaderBlock({ streamType: 'stdout', Multi: ['a', 'b'] })
  t.same(decodeHeaderBlock(block), { streamtype: ['stdout'], multi: ['a', 'b'] })
  t.throws(() => decodeHeaderBlock(block.subarray(0, block.length - 1)), /truncated/)
})

t.test('compressed blocks inflate with zlib and the dictionary, one connection-wide stream', async t => {
  const c = new HeaderCompressor()
  const first = c.compress({ streamtype: 'error' })
  const second = c.compress({ streamtype: 'stdin', port: '8080' })
  t.equal(first[0], 0x78)
  t.equal((first[0]! * 256 + first[1]!) % 31, 0, 'valid zlib header check bits')
  t.equal(first.readUInt32BE(2), adler32(SPDY3_DICTIONARY), 'names the SPDY dictionary')
  t.same([...second.subarray(-5)], [0, 0, 0, 0xff, 0xff], 'each block ends with the sync-flush marker (an empty stored block)')
  const all = inflateSync(Buffer.concat([first, second]), { dictionary: SPDY3_DICTIONARY, finishFlush: constants.Z_SYNC_FLUSH })
  t.same(all, Buffer.concat([encodeHeaderBlock({ streamtype: 'error' }), encodeHeaderBlock({ streamtype: 'stdin', port: '8080' })]))
  const d = new HeaderDecompressor()
  t.same(d.decompress(first), { streamtype: ['error'] })
  t.same(d.decompress(second), { streamtype: ['stdin'], port: ['8080'] })
})

t.test('the decompressor reads blocks deflated by a real zlib stream with sync flushes (as Go writes them)', async t => {
  const z = createDeflate({ dictionary: SPDY3_DICTIONARY, level: 9 })
  const chunks: Buffer[] = []
  z.on('data', (c: Buffer) => chunks.push(c))
  const flushBlock = async (headers: Record<string, string>): Promise<Buffer> => {
    const before = chunks.length
    z.write(encodeHeaderBlock(headers))
    await new Promise<void>(resolve => z.flush(constants.Z_SYNC_FLUSH, () => resolve()))
    await new Promise(resolve => setImmediate(resolve))
    return Buffer.concat(chunks.slice(before))
  }
  const a = await flushBlock({ streamtype: 'stdout' })
  const b = await flushBlock({})
  const c = await flushBlock({ streamtype: 'stderr', requestid: '0' })
  z.close()
  const d = new HeaderDecompressor()
  t.same(d.decompress(a), { streamtype: ['stdout'] })
  t.same(d.decompress(b), {})
  t.same(d.decompress(c), { streamtype: ['stderr'], requestid: ['0'] })
})

t.test('a connection sending more header bytes than the bound is refused', async t => {
  const c = new HeaderCompressor()
  const d = new HeaderDecompressor()
  t.same(d.decompress(c.compress({ big: 'x'.repeat(1000) })), { big: ['x'.repeat(1000)] })
  t.throws(() => d.decompress(c.compress({ big: 'x'.repeat(MAX_CONNECTION_HEADER_BYTES) })), /exceed/)
})
