import t from 'tap'
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { bridgeConflist, CONFLIST_NAME, hasNetworkConfig, writeCniConfigIfMissing } from './cni-config.js'

const dir = mkdtempSync(join(tmpdir(), 'cni-config-'))
t.teardown(() => rmSync(dir, { recursive: true, force: true }))

t.test('the conflist chains bridge with host-local IPAM over the pod CIDR, then portmap', async t => {
  const c = bridgeConflist('10.244.1.0/24') as { plugins: Array<{ type: string; ipam?: { type: string; ranges: unknown; routes: unknown } }> }
  t.same(c.plugins.map(p => p.type), ['bridge', 'portmap'])
  t.same(c.plugins[0]!.ipam, { type: 'host-local', ranges: [[{ subnet: '10.244.1.0/24' }]], routes: [{ dst: '0.0.0.0/0' }] })
  const v6 = bridgeConflist('fd00:10::/64') as { plugins: Array<{ ipam?: { routes: unknown } }> }
  t.same(v6.plugins[0]!.ipam!.routes, [{ dst: '::/0' }])
})

t.test('an empty conf dir gets the conflist; a second call leaves it alone', async t => {
  const d = join(dir, 'empty')
  const written = writeCniConfigIfMissing(d, '10.88.0.0/16')
  t.equal(written, join(d, CONFLIST_NAME))
  t.equal(JSON.parse(readFileSync(written!, 'utf8')).plugins[0].ipam.ranges[0][0].subnet, '10.88.0.0/16')
  t.equal(writeCniConfigIfMissing(d, '10.99.0.0/16'), undefined)
  t.same(readdirSync(d), [CONFLIST_NAME], 'no temporary file is left behind')
})

t.test('a dir with an operator network configuration is never touched', async t => {
  const d = mkdtempSync(join(dir, 'own-'))
  writeFileSync(join(d, '05-mine.conf'), '{}')
  t.ok(hasNetworkConfig(d))
  t.equal(writeCniConfigIfMissing(d, '10.88.0.0/16'), undefined)
  t.same(readdirSync(d), ['05-mine.conf'])
  writeFileSync(join(d, 'README'), 'x')
  t.notOk(hasNetworkConfig(join(dir, 'missing')), 'a missing dir has no configuration')
})
