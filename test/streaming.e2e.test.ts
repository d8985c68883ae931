// kubectl exec, exec -it, attach, cp and port-forward against a busybox pod on the real containerd, through
// `orch up`'s API server and orchlet, with kubectl 1.29 (SPDY/3.1) and kubectl 1.33 (WebSocket v5, translated to SPDY in
// the API server; port-forward through the SPDY-over-WebSocket tunnel).
import t from 'tap'
import { execFile, spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { connect } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ensureContainerd, conformanceImage } from '../agent/runtime/cri/containerd-for-tests.js'
import { runKubectl, startOrch } from './orch-process.js'
import { CONFLIST_NAME } from '../agent/node/cni-config.js'

const env = await ensureContainerd()
if (!env.ok) {
  if (env.skippable) t.plan(0, env.reason)
  else t.fail(env.reason)
} else {
  const NODE = `stream-${process.pid}`
  // The orchlet writes its conflist into the shared containerd's CNI dir when empty; the test leaves the dir as found.
  const cniConf = join(env.socket, '..', 'cni', 'conf', CONFLIST_NAME)
  const cniWasThere = existsSync(cniConf)
  const dir = mkdtempSync(join(tmpdir(), 'orch-stream-e2e-'))
  const orch = await startOrch(join(dir, 'data'), 60_000, ['--node-name', NODE, '--container-runtime-endpoint', env.endpoint,
    '--orchlet-arg=--cluster-dns=10.96.0.10', '--orchlet-arg=--cluster-domain=cluster.local'])
  const kubectlBin = (v: string): string => `/usr/lib/google-cloud-sdk/bin/kubectl.${v}`
  const kubectl = (args: string[], binary = kubectlBin('1.29')): ReturnType<typeof runKubectl> =>
    runKubectl(orch.kubeconfig, join(dir, 'cache'), args, { binary })

  t.teardown(async () => {
    await kubectl(['delete', 'pod', 'bb', 'att', 'net', 'sysctl-ok', 'sysctl-unsafe', 'confined', 'published', 'web', '--grace-period=0', '--wait=false'])
    await kubectl(['delete', 'service', 'web', '--wait=false'])
    await new Promise(resolve => setTimeout(resolve, 3000))
    await orch.stop()
    rmSync(dir, { recursive: true, force: true })
    if (!cniWasThere) rmSync(cniConf, { force: true })
  })

  async function until<T> (what: string, f: () => Promise<T | undefined>, ms = 60_000): Promise<T> {
    const deadline = Date.now() + ms
    for (;;) {
      const v = await f()
      if (v !== undefined) return v
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}\n${orch.logs().slice(-3000)}`)
      await new Promise(resolve => setTimeout(resolve, 300))
    }
  }

  const manifest = join(dir, 'bb.yaml')
  writeFileSync(manifest, `apiVersion: v1
kind: Pod
metadata: {name: bb, namespace: default}
spec:
  nodeName: ${NODE}
  hostNetwork: true
  terminationGracePeriodSeconds: 1
  containers:
  - name: main
    image: ${conformanceImage}
    imagePullPolicy: Never
    command: [sh, -c, 'echo started; while true; do sleep 1; done']
`)
  const created = await kubectl(['create', '-f', manifest])
  if (created.code !== 0) throw new Error(`kubectl create failed: ${created.stderr}`)
  await until('the busybox pod to run', async () => {
    const r = await kubectl(['get', 'pod', 'bb', '-o', 'jsonpath={.status.phase}'])
    return r.stdout === 'Running' ? true : undefined
  })
  // kubectl cp runs `tar` in the container; the test image links only a few busybox applets.
  const linked = await kubectl(['exec', 'bb', '--', 'busybox', 'ln', '-s', 'busybox', '/bin/tar'])
  if (linked.code !== 0) throw new Error(`linking tar failed: ${linked.stderr}`)

  for (const version of ['1.29', '1.33']) {
    t.test(`kubectl ${version} exec runs a command in the container and passes its output and exit code`, async t => {
      const r = await kubectl(['exec', 'bb', '--', 'sh', '-c', 'echo out-$((40+2)); echo err >&2; exit 3'], kubectlBin(version))
      t.equal(r.stdout, 'out-42\n')
      t.match(r.stderr, /err/)
      t.equal(r.code, 3)
    })

    t.test(`kubectl ${version} exec -i passes stdin to the command until it ends`, async t => {
      const out = await new Promise<string>((resolve, reject) => {
        const child = execFile(kubectlBin(version), ['--kubeconfig', orch.kubeconfig, 'exec', '-i', 'bb', '--', 'sh', '-c', 'wc -c'], { timeout: 30_000 }, (err, stdout, stderr) => {
          if (err !== null) reject(new Error(`${err.message}\n${stderr}`)); else resolve(stdout)
        })
        child.stdin!.end('0123456789')
      })
      t.equal(out.trim(), '10')
    })

    t.test(`kubectl ${version} cp copies a file into the pod and back`, async t => {
      const src = join(dir, `in-${version}.txt`)
      writeFileSync(src, `hello from ${version}\n`.repeat(1000))
      const up = await kubectl(['cp', src, `default/bb:/tmp/in-${version}.txt`], kubectlBin(version))
      t.equal(up.code, 0, up.stderr)
      const back = join(dir, `back-${version}.txt`)
      const down = await kubectl(['cp', `default/bb:/tmp/in-${version}.txt`, back], kubectlBin(version))
      t.equal(down.code, 0, down.stderr)
      t.equal(readFileSync(back, 'utf8'), readFileSync(src, 'utf8'))
    })
  }

  t.test('kubectl 1.33 exec speaks WebSocket v5.channel.k8s.io, translated to SPDY to the orchlet, with stdin and the exit code', async t => {
    const r = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      const child = execFile(kubectlBin('1.33'), ['--kubeconfig', orch.kubeconfig, '-v=6', 'exec', '-i', 'bb', '--', 'sh', '-c', 'wc -c; exit 4'], { timeout: 30_000 }, (err, stdout, stderr) => {
        resolve({ code: err === null ? 0 : (err as { code?: number }).code ?? null, stdout, stderr })
      })
      child.stdin!.end('x'.repeat(100_000))
    })
    t.match(r.stderr, /The subprotocol is v5\.channel\.k8s\.io/, 'the WebSocket upgrade negotiated v5')
    t.notMatch(r.stderr, /fallback/i, 'no fallback to SPDY')
    t.equal(r.stdout.trim(), '100000', 'stdin crossed whole and its close ended the command')
    t.equal(r.code, 4, 'the exit code from the Status on the error channel')
  })

  t.test('kubectl 1.33 exec -it over WebSocket gives the command a terminal', async t => {
    const out = await new Promise<string>((resolve) => {
      const cmd = `${kubectlBin('1.33')} --kubeconfig ${orch.kubeconfig} exec -it bb -- sh -c 'tty; exit 0'`
      const child = spawn('script', ['-qec', cmd, '/dev/null'], { stdio: ['pipe', 'pipe', 'pipe'] })
      let text = ''
      child.stdout.on('data', (d: Buffer) => { text += d.toString() })
      child.stderr.on('data', (d: Buffer) => { text += d.toString() })
      const timer = setTimeout(() => child.kill('SIGKILL'), 30_000)
      child.on('exit', () => { clearTimeout(timer); resolve(text) })
    })
    t.match(out, /\/dev\/pts\/\d+/)
  })

  t.test('kubectl attach -i reaches the stdin of the main process and shows its output (1.29 SPDY, 1.33 WebSocket)', async t => {
    const att = join(dir, 'att.yaml')
    writeFileSync(att, `apiVersion: v1
kind: Pod
metadata: {name: att, namespace: default}
spec:
  nodeName: ${NODE}
  hostNetwork: true
  terminationGracePeriodSeconds: 1
  containers:
  - name: main
    image: ${conformanceImage}
    imagePullPolicy: Never
    stdin: true
    command: [sh, -c, 'while read l; do echo got:$l; done']
`)
    t.equal((await kubectl(['create', '-f', att])).code, 0)
    await until('the attach pod to run', async () => (await kubectl(['get', 'pod', 'att', '-o', 'jsonpath={.status.phase}'])).stdout === 'Running' ? true : undefined)
    for (const version of ['1.29', '1.33']) {
      const out = await new Promise<string>((resolve) => {
        const child = spawn(kubectlBin(version), ['--kubeconfig', orch.kubeconfig, '-v=6', 'attach', '-i', 'att'], { stdio: ['pipe', 'pipe', 'pipe'] })
        let text = ''
        let log = ''
        child.stdout.on('data', (d: Buffer) => { text += d.toString(); if (text.includes(`got:hello-${version}`)) child.kill() })
        child.stderr.on('data', (d: Buffer) => { log += d.toString() })
        child.stdin.write(`hello-${version}\n`)
        const timer = setTimeout(() => child.kill('SIGKILL'), 20_000)
        child.on('exit', () => {
          clearTimeout(timer)
          if (version === '1.33') t.match(log, /The subprotocol is v5\.channel\.k8s\.io/, 'kubectl 1.33 attached over WebSocket v5')
          resolve(text)
        })
      })
      t.match(out, new RegExp(`got:hello-${version.replace('.', '\\.')}`), `kubectl ${version}`)
    }
  })

  t.test('kubectl exec -it gives the command a terminal', async t => {
    // `script` gives kubectl a pty; the remote side sees a TTY, so `tty` names a device.
    const out = await new Promise<string>((resolve) => {
      const cmd = `${kubectlBin('1.29')} --kubeconfig ${orch.kubeconfig} exec -it bb -- sh -c 'tty; exit 0'`
      const child = spawn('script', ['-qec', cmd, '/dev/null'], { stdio: ['pipe', 'pipe', 'pipe'] })
      let text = ''
      child.stdout.on('data', (d: Buffer) => { text += d.toString() })
      child.stderr.on('data', (d: Buffer) => { text += d.toString() })
      const timer = setTimeout(() => child.kill('SIGKILL'), 30_000)
      child.on('exit', () => { clearTimeout(timer); resolve(text) })
    })
    t.match(out, /\/dev\/pts\/\d+/)
  })

  t.test('exec on a pod without the container is refused with a Status', async t => {
    const r = await kubectl(['exec', 'bb', '-c', 'nope', '--', 'true'])
    t.not(r.code, 0)
    t.match(r.stderr, /container nope is not valid for pod bb/)
  })

  t.test('a pod without hostNetwork gets an IP from the pod CIDR and the node stays Ready', async t => {
    const net = join(dir, 'net.yaml')
    writeFileSync(net, `apiVersion: v1
kind: Pod
metadata: {name: net, namespace: default}
spec:
  nodeName: ${NODE}
  terminationGracePeriodSeconds: 1
  containers:
  - name: main
    image: ${conformanceImage}
    imagePullPolicy: Never
    command: [sh, -c, 'while true; do sleep 1; done']
`)
    const c = await kubectl(['create', '-f', net])
    t.equal(c.code, 0, c.stderr)
    const ip = await until('the pod IP', async () => {
      const r = await kubectl(['get', 'pod', 'net', '-o', 'jsonpath={.status.phase} {.status.podIP}'])
      const [phase, podIP] = r.stdout.split(' ')
      return phase === 'Running' && podIP !== undefined && podIP !== '' ? podIP : undefined
    })
    t.match(ip, /^\d+\.\d+\.\d+\.\d+$/)
    const hostIP = (await kubectl(['get', 'pod', 'net', '-o', 'jsonpath={.status.hostIP}'])).stdout
    t.not(ip, hostIP, 'the pod has its own network namespace')
    const inside = await kubectl(['exec', 'net', '--', 'sh', '-c', 'cat /proc/net/fib_trie; hostname'])
    t.match(inside.stdout, ip, 'the container sees its IP')
    const ready = await until('the node Ready condition', async () => {
      const r = await kubectl(['get', 'node', NODE, '-o', 'jsonpath={.status.conditions[?(@.type=="Ready")].status}'])
      return r.stdout === '' ? undefined : r.stdout
    })
    t.equal(ready, 'True')
    const resolv = await kubectl(['exec', 'net', '--', 'cat', '/etc/resolv.conf'])
    t.match(resolv.stdout, /nameserver 10\.96\.0\.10/)
    t.match(resolv.stdout, /search default\.svc\.cluster\.local svc\.cluster\.local cluster\.local/)
    t.match(resolv.stdout, /options ndots:5/)
  })

  t.test('a safe sysctl is set in the pod; an unsafe one is refused with SysctlForbidden', async t => {
    const make = (name: string, sysctl: string, value: string): string => {
      const p = join(dir, `${name}.yaml`)
      writeFileSync(p, `apiVersion: v1
kind: Pod
metadata: {name: ${name}, namespace: default}
spec:
  nodeName: ${NODE}
  terminationGracePeriodSeconds: 1
  securityContext: {sysctls: [{name: ${sysctl}, value: "${value}"}]}
  containers:
  - name: main
    image: ${conformanceImage}
    imagePullPolicy: Never
    command: [sh, -c, 'while true; do sleep 1; done']
`)
      return p
    }
    t.equal((await kubectl(['create', '-f', make('sysctl-ok', 'net.ipv4.ip_unprivileged_port_start', '80')])).code, 0)
    t.equal((await kubectl(['create', '-f', make('sysctl-unsafe', 'kernel.msgmax', '65536')])).code, 0)
    await until('the safe-sysctl pod to run', async () => (await kubectl(['get', 'pod', 'sysctl-ok', '-o', 'jsonpath={.status.phase}'])).stdout === 'Running' ? true : undefined)
    const v = await kubectl(['exec', 'sysctl-ok', '--', 'cat', '/proc/sys/net/ipv4/ip_unprivileged_port_start'])
    t.equal(v.stdout.trim(), '80')
    const refused = await until('the unsafe-sysctl pod to fail', async () => {
      const r = await kubectl(['get', 'pod', 'sysctl-unsafe', '-o', 'jsonpath={.status.phase}/{.status.reason}/{.status.message}'])
      return r.stdout.startsWith('Failed') ? r.stdout : undefined
    })
    t.equal(refused, 'Failed/SysctlForbidden/Pod was rejected: forbidden sysctl: "kernel.msgmax" not allowlisted')
  })

  t.test('seccomp: Unconfined without a profile, the runtime default profile with RuntimeDefault', async t => {
    const p = join(dir, 'confined.yaml')
    writeFileSync(p, `apiVersion: v1
kind: Pod
metadata: {name: confined, namespace: default}
spec:
  nodeName: ${NODE}
  hostNetwork: true
  terminationGracePeriodSeconds: 1
  securityContext: {seccompProfile: {type: RuntimeDefault}}
  containers:
  - name: main
    image: ${conformanceImage}
    imagePullPolicy: Never
    command: [sh, -c, 'while true; do sleep 1; done']
`)
    t.equal((await kubectl(['create', '-f', p])).code, 0)
    await until('the confined pod to run', async () => (await kubectl(['get', 'pod', 'confined', '-o', 'jsonpath={.status.phase}'])).stdout === 'Running' ? true : undefined)
    const mode = async (pod: string): Promise<string> => (await kubectl(['exec', pod, '--', 'grep', '^Seccomp:', '/proc/self/status'])).stdout.replace(/\s+/g, ' ').trim()
    t.equal(await mode('bb'), 'Seccomp: 0')
    t.equal(await mode('confined'), 'Seccomp: 2')
  })

  t.test('a hostPort publishes the container port on the node address (CNI portmap)', async t => {
    const hostPort = 30000 + (process.pid % 2000)
    const p = join(dir, 'published.yaml')
    writeFileSync(p, `apiVersion: v1
kind: Pod
metadata: {name: published, namespace: default}
spec:
  nodeName: ${NODE}
  terminationGracePeriodSeconds: 1
  containers:
  - name: main
    image: ${conformanceImage}
    imagePullPolicy: Never
    ports: [{containerPort: 8080, hostPort: ${hostPort}}]
    command: [sh, -c, 'while true; do echo published | nc -l -p 8080; done']
`)
    t.equal((await kubectl(['create', '-f', p])).code, 0)
    await until('the published pod to run', async () => (await kubectl(['get', 'pod', 'published', '-o', 'jsonpath={.status.phase}'])).stdout === 'Running' ? true : undefined)
    const hostIP = (await kubectl(['get', 'pod', 'published', '-o', 'jsonpath={.status.hostIP}'])).stdout
    const got = await until('an answer through the host port', async () => {
      const text = await new Promise<string>(resolve => {
        const s = connect(hostPort, hostIP)
        let buf = ''
        s.on('data', (d: Buffer) => { buf += d.toString() })
        s.on('end', () => resolve(buf))
        s.on('error', () => resolve(''))
        setTimeout(() => { s.destroy(); resolve(buf) }, 3000)
      })
      return text === '' ? undefined : text
    }, 20_000)
    t.equal(got, 'published\n')
  })

  for (const version of ['1.29', '1.33']) t.test(`kubectl ${version} port-forward reaches a server listening in the pod`, async t => {
    // 20000-28999: apart from the hostPort test's 30000-31999, whose DNAT would answer instead of the pod.
    const port = 20000 + (process.pid % 4500) * 2 + (version === '1.33' ? 1 : 0)
    const server = spawn(kubectlBin(version), ['--kubeconfig', orch.kubeconfig, 'exec', 'bb', '--', 'sh', '-c', `echo pong | nc -l -p ${port}`], { stdio: 'ignore' })
    const pf = spawn(kubectlBin(version), ['--kubeconfig', orch.kubeconfig, '-v=6', 'port-forward', 'pod/bb', `:${port}`], { stdio: ['ignore', 'pipe', 'pipe'] })
    let log = ''
    pf.stderr.on('data', (d: Buffer) => { log += d.toString() })
    t.teardown(() => { pf.kill(); server.kill() })
    const local = await new Promise<number>((resolve, reject) => {
      let text = ''
      pf.stdout.on('data', (d: Buffer) => {
        text += d.toString()
        const m = /Forwarding from 127\.0\.0\.1:(\d+)/.exec(text)
        if (m !== null) resolve(Number(m[1]))
      })
      pf.once('exit', code => reject(new Error(`port-forward exited ${code}: ${text}`)))
    })
    await new Promise(resolve => setTimeout(resolve, 1000))
    const got = await new Promise<string>((resolve, reject) => {
      const s = connect(local, '127.0.0.1')
      let text = ''
      s.on('data', (d: Buffer) => { text += d.toString() })
      s.on('end', () => resolve(text))
      s.on('error', reject)
      setTimeout(() => { s.destroy(); resolve(text) }, 10_000)
    })
    t.equal(got, 'pong\n')
    // kubectl 1.33 tunnels SPDY through a WebSocket (SPDY/3.1+portforward.k8s.io) and says so at -v=6.
    if (version === '1.33') {
      t.match(log, /negotiated protocol: portforward\.k8s\.io/, 'the WebSocket tunnel was used')
      t.notMatch(log, /fallback/i, 'no fallback to SPDY')
    }
  })

  t.test('pods/proxy and services/proxy reach a web server in a pod through kubectl', async t => {
    const web = join(dir, 'web.yaml')
    writeFileSync(web, `apiVersion: v1
kind: Pod
metadata: {name: web, namespace: default, labels: {app: web}}
spec:
  nodeName: ${NODE}
  terminationGracePeriodSeconds: 1
  containers:
  - name: main
    image: ${conformanceImage}
    imagePullPolicy: Never
    command: [sh, -c, 'mkdir -p /www && echo hello-from-the-pod > /www/index.html && exec httpd -f -p 8080 -h /www']
    ports: [{name: http, containerPort: 8080}]
    readinessProbe: {tcpSocket: {port: 8080}, periodSeconds: 1}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: default}
spec:
  selector: {app: web}
  ports: [{name: http, port: 80, targetPort: http}]
`)
    const c = await kubectl(['create', '-f', web])
    t.equal(c.code, 0, c.stderr)
    await until('the web pod to be ready', async () => {
      const r = await kubectl(['get', 'pod', 'web', '-o', 'jsonpath={.status.conditions[?(@.type=="Ready")].status}'])
      return r.stdout === 'True' ? true : undefined
    })
    const viaPod = await until('the page through pods/proxy', async () => {
      const r = await kubectl(['get', '--raw', '/api/v1/namespaces/default/pods/web:8080/proxy/index.html'])
      return r.code === 0 ? r.stdout : undefined
    }, 20_000)
    t.equal(viaPod.trim(), 'hello-from-the-pod')
    const viaService = await until('the page through services/proxy', async () => {
      const r = await kubectl(['get', '--raw', '/api/v1/namespaces/default/services/web:http/proxy/index.html'])
      return r.code === 0 ? r.stdout : undefined
    }, 30_000)
    t.equal(viaService.trim(), 'hello-from-the-pod')
    const missing = await kubectl(['get', '--raw', '/api/v1/namespaces/default/pods/nothere:8080/proxy/'])
    t.not(missing.code, 0)
    t.match(missing.stderr, /not found/)
  })
}
