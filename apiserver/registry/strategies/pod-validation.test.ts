import t from 'tap'
import { validatePodSpec, validatePodUpdate } from './pod-validation.js'

const pod = (spec: Record<string, unknown>) => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec })
const c = (name: string, extra: Record<string, unknown> = {}) => ({ name, image: 'busybox:1', ...extra })

const cases: Array<[string, Record<string, unknown>, Array<{ field: string; message: RegExp }>]> = [
  ['a container without image', { containers: [{ name: 'a' }] }, [{ field: 'spec.containers[0].image', message: /^Required value$/ }]],
  ['duplicate container names across init and main', { initContainers: [c('a')], containers: [c('a')] }, [{ field: 'spec.containers[0].name', message: /^Duplicate value: "a"$/ }]],
  ['a bad container name', { containers: [c('Web_1')] }, [{ field: 'spec.containers[0].name', message: /^Invalid value: "Web_1": a lowercase RFC 1123 label/ }]],
  ['a mount of a missing volume', { containers: [c('a', { volumeMounts: [{ name: 'data', mountPath: '/d' }] })] }, [{ field: 'spec.containers[0].volumeMounts[0].name', message: /^Not found: "data"$/ }]],
  ['a volume with two sources', { volumes: [{ name: 'v', emptyDir: {}, hostPath: { path: '/x' } }], containers: [c('a')] }, [{ field: 'spec.volumes[0].hostPath', message: /may not specify more than 1 volume type/ }]],
  ['a volume without source', { volumes: [{ name: 'v' }], containers: [c('a')] }, [{ field: 'spec.volumes[0]', message: /must specify a volume type/ }]],
  ['a bad env name', { containers: [c('a', { env: [{ name: '1X', value: 'y' }] })] }, [{ field: 'spec.containers[0].env[0].name', message: /a valid environment variable name/ }]],
  ['a port out of range', { containers: [c('a', { ports: [{ containerPort: 70000 }] })] }, [{ field: 'spec.containers[0].ports[0].containerPort', message: /must be between 1 and 65535/ }]],
  ['a negative grace period', { containers: [c('a')], terminationGracePeriodSeconds: -1 }, [{ field: 'spec.terminationGracePeriodSeconds', message: /greater than or equal to 0/ }]]
]

for (const [what, spec, want] of cases) {
  t.test(`rejects a pod with ${what}`, async t => {
    t.match(validatePodSpec(pod(spec)), want)
  })
}

t.test('accepts a valid pod', async t => {
  t.same(validatePodSpec(pod({ volumes: [{ name: 'data', emptyDir: {} }], containers: [c('a', { volumeMounts: [{ name: 'data', mountPath: '/d' }], env: [{ name: 'MY_VAR', value: '1' }], ports: [{ containerPort: 80, name: 'http' }] })] })), [])
})

t.test('pod updates may change images, deadlines and add tolerations, nothing else', async t => {
  const old = pod({ containers: [c('a')], tolerations: [{ key: 'k', operator: 'Exists' }] })
  t.same(validatePodUpdate(pod({ containers: [c('a', { image: 'busybox:2' })], activeDeadlineSeconds: 5, tolerations: [{ key: 'k', operator: 'Exists' }, { key: 'n', operator: 'Exists' }] }), old), [])
  t.match(validatePodUpdate(pod({ containers: [c('a', { args: ['x'] })], tolerations: [{ key: 'k', operator: 'Exists' }] }), old), [{ field: 'spec', message: /^Forbidden: pod updates may not change fields other than/ }])
  t.match(validatePodUpdate(pod({ containers: [c('a')], tolerations: [] }), old), [{ field: 'spec.tolerations' }])
})
