import t from 'tap'
import { orchletStreamPath, podStreamOptions, type PodStreamKind } from './pod-stream.js'

const pod = (containers: string[], phase = 'Running'): Parameters<typeof orchletStreamPath>[2] =>
  ({ metadata: { name: 'web' }, spec: { nodeName: 'n1', containers: containers.map(name => ({ name })) }, status: { phase } })
/** The path for a query, through the options object admission sees. */
const path = (kind: PodStreamKind, p: Parameters<typeof orchletStreamPath>[2], q: string): string => orchletStreamPath(kind, 'ns', p, podStreamOptions(kind, new URLSearchParams(q)))

t.test('the query becomes the v1 options object admission sees, false and empty fields left out', async t => {
  t.same(podStreamOptions('exec', new URLSearchParams('command=sh&command=-c&stdin=true&stdout=1&tty=false&container=main')),
    { kind: 'PodExecOptions', apiVersion: 'v1', stdin: true, stdout: true, container: 'main', command: ['sh', '-c'] })
  t.same(podStreamOptions('attach', new URLSearchParams('stdout=true')), { kind: 'PodAttachOptions', apiVersion: 'v1', stdout: true })
  t.same(podStreamOptions('portforward', new URLSearchParams('ports=80,8080')), { kind: 'PodPortForwardOptions', apiVersion: 'v1', ports: [80, 8080] })
  t.throws(() => podStreamOptions('exec', new URLSearchParams('command=ls&stdout=maybe')), { code: 400 })
  t.throws(() => podStreamOptions('portforward', new URLSearchParams('ports=http')), { message: 'invalid port http' })
})

t.test('exec options become the kubelet query; the only container is the default', async t => {
  t.equal(path('exec', pod(['main']), 'command=sh&command=-c&command=echo hi&stdin=true&stdout=true&stderr=true&tty=false'), '/exec/ns/web/main?command=sh&command=-c&command=echo+hi&input=1&output=1&error=1')
  t.equal(path('attach', pod(['a', 'b']), 'container=b&stdout=1&tty=1'), '/attach/ns/web/b?output=1&tty=1')
  t.equal(orchletStreamPath('exec', 'ns', pod(['a', 'b']), { kind: 'PodExecOptions', apiVersion: 'v1', container: 'b', stdout: true, command: ['id'] }),
    '/exec/ns/web/b?command=id&output=1', 'options as a mutating admission plugin left them')
})

t.test('Kubernetes refusals: no stream, no command, completed pod, ambiguous or unknown container', async t => {
  t.throws(() => path('exec', pod(['main']), 'command=ls'), { message: 'you must specify at least one of stdin, stdout, stderr' })
  t.throws(() => path('exec', pod(['main']), 'stdout=true'), { message: 'you must specify at least one command for the container' })
  t.throws(() => path('exec', pod(['main'], 'Succeeded'), 'command=ls&stdout=1'), { message: 'cannot exec into a container in a completed pod; current phase is Succeeded' })
  t.throws(() => path('exec', pod(['a', 'b']), 'command=ls&stdout=1'), { message: 'a container name must be specified for pod web, choose one of: [a b]' })
  t.throws(() => path('attach', pod(['a']), 'container=z&stdout=1'), { message: 'container z is not valid for pod web' })
})

t.test('port-forward ports pass as the kubelet port parameters; bad ones are refused', async t => {
  t.equal(path('portforward', pod(['a']), 'ports=80&ports=8080'), '/portForward/ns/web?port=80&port=8080')
  t.equal(path('portforward', pod(['a']), ''), '/portForward/ns/web')
  t.throws(() => path('portforward', pod(['a']), 'ports=70000'), { message: 'invalid port 70000' })
})
