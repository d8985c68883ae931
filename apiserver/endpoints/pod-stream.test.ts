import t from 'tap'
import { orchletStreamPath } from './pod-stream.js'

const pod = (containers: string[], phase = 'Running'): Parameters<typeof orchletStreamPath>[2] =>
  ({ metadata: { name: 'web' }, spec: { nodeName: 'n1', containers: containers.map(name => ({ name })) }, status: { phase } })

t.test('exec options become the kubelet query; the only container is the default', async t => {
  const q = new URLSearchParams('command=sh&command=-c&command=echo hi&stdin=true&stdout=true&stderr=true&tty=false')
  t.equal(orchletStreamPath('exec', 'ns', pod(['main']), q), '/exec/ns/web/main?command=sh&command=-c&command=echo+hi&input=1&output=1&error=1')
  t.equal(orchletStreamPath('attach', 'ns', pod(['a', 'b']), new URLSearchParams('container=b&stdout=1&tty=1')), '/attach/ns/web/b?output=1&tty=1')
})

t.test('Kubernetes refusals: no stream, no command, completed pod, ambiguous or unknown container', async t => {
  t.throws(() => orchletStreamPath('exec', 'ns', pod(['main']), new URLSearchParams('command=ls')), { message: 'you must specify at least one of stdin, stdout, stderr' })
  t.throws(() => orchletStreamPath('exec', 'ns', pod(['main']), new URLSearchParams('stdout=true')), { message: 'you must specify at least one command for the container' })
  t.throws(() => orchletStreamPath('exec', 'ns', pod(['main'], 'Succeeded'), new URLSearchParams('command=ls&stdout=1')), { message: 'cannot exec into a container in a completed pod; current phase is Succeeded' })
  t.throws(() => orchletStreamPath('exec', 'ns', pod(['a', 'b']), new URLSearchParams('command=ls&stdout=1')), { message: 'a container name must be specified for pod web, choose one of: [a b]' })
  t.throws(() => orchletStreamPath('attach', 'ns', pod(['a']), new URLSearchParams('container=z&stdout=1')), { message: 'container z is not valid for pod web' })
  t.throws(() => orchletStreamPath('exec', 'ns', pod(['a']), new URLSearchParams('command=ls&stdout=maybe')), { code: 400 })
})

t.test('port-forward ports pass as the kubelet port parameters; bad ones are refused', async t => {
  t.equal(orchletStreamPath('portforward', 'ns', pod(['a']), new URLSearchParams('ports=80&ports=8080')), '/portForward/ns/web?port=80&port=8080')
  t.equal(orchletStreamPath('portforward', 'ns', pod(['a']), new URLSearchParams()), '/portForward/ns/web')
  t.throws(() => orchletStreamPath('portforward', 'ns', pod(['a']), new URLSearchParams('ports=70000')), { message: 'invalid port 70000' })
})
