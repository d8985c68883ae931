import t from 'tap'
import { seccompProfile } from './seccomp.js'

t.test('the container profile wins over the pod one, which wins over the node default', async t => {
  t.same(seccompProfile({ type: 'RuntimeDefault' }, { type: 'Unconfined' }, true, '/r/seccomp'), { profileType: 'Unconfined' })
  t.same(seccompProfile({ type: 'RuntimeDefault' }, undefined, false, '/r/seccomp'), { profileType: 'RuntimeDefault' })
  t.same(seccompProfile(undefined, undefined, false, '/r/seccomp'), { profileType: 'Unconfined' })
  t.same(seccompProfile(undefined, undefined, true, '/r/seccomp'), { profileType: 'RuntimeDefault' }, '--seccomp-default')
})

t.test('Localhost profiles are files under <root-dir>/seccomp and need their name', async t => {
  t.same(seccompProfile(undefined, { type: 'Localhost', localhostProfile: 'profiles/audit.json' }, false, '/r/seccomp'), { profileType: 'Localhost', localhostRef: '/r/seccomp/profiles/audit.json' })
  t.throws(() => seccompProfile(undefined, { type: 'Localhost' }, false, '/r/seccomp'), { message: 'localhostProfile must be set if seccompProfile type is Localhost.' })
})
