import t from 'tap'
import { normalizeReference, parseReference } from './reference.js'

t.test('normalises references as Docker does', async t => {
  const cases: [string, string][] = [
    ['busybox', 'docker.io/library/busybox:latest'],
    ['busybox:1.36', 'docker.io/library/busybox:1.36'],
    ['user/app', 'docker.io/user/app:latest'],
    ['index.docker.io/library/busybox:1', 'docker.io/library/busybox:1'],
    ['ghcr.io/org/team/app:v1.2', 'ghcr.io/org/team/app:v1.2'],
    ['localhost:5000/app', 'localhost:5000/app:latest'],
    ['127.0.0.1:5000/a/b:t', '127.0.0.1:5000/a/b:t'],
    [`ghcr.io/a/b@sha256:${'a'.repeat(64)}`, `ghcr.io/a/b@sha256:${'a'.repeat(64)}`],
    [`ghcr.io/a/b:v1@sha256:${'b'.repeat(64)}`, `ghcr.io/a/b:v1@sha256:${'b'.repeat(64)}`]
  ]
  for (const [input, want] of cases) t.equal(normalizeReference(input), want, input)
})

t.test('splits registry, repository, tag and digest', async t => {
  t.same(parseReference('localhost:5000/x/y:z'), { registry: 'localhost:5000', repository: 'x/y', tag: 'z', digest: undefined })
})

t.test('rejects malformed references with OCI_ERR_BAD_REFERENCE', async t => {
  for (const bad of ['', 'UPPER/case', 'a/b:', 'a@sha256:xyz', 'a//b', 'a/b:bad tag', `a@md5:${'a'.repeat(32)}`]) {
    t.throws(() => parseReference(bad), { code: 'OCI_ERR_BAD_REFERENCE' }, JSON.stringify(bad))
  }
})
