// The CRI client's wire behaviour against a scripted gRPC server: endpoints, request encoding, deadlines, error codes.
import t from 'tap'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import {
  Server, ServerCredentials, status as GrpcStatus,
  type handleUnaryCall, type MethodDefinition, type ServiceDefinition, type UntypedServiceImplementation
} from '@grpc/grpc-js'
import type { PodSandboxConfig } from '../runtime.js'
import { createCriRuntime } from './cri-runtime.js'
import { parseCriEndpoint } from './endpoint.js'
import { loadCriProto, type Msg } from './grpc-client.js'

const root = loadCriProto()
type Handler = (req: Msg) => Promise<Msg>

/** A real gRPC server for one CRI service whose methods are the given async handlers. */
async function serve (socket: string, service: 'RuntimeService' | 'ImageService', handlers: Record<string, Handler>): Promise<Server> {
  const definition: Record<string, MethodDefinition<Msg, Msg>> = {}
  const impl: UntypedServiceImplementation = {}
  for (const [name, handler] of Object.entries(handlers)) {
    const m = root.lookupService(`runtime.v1.${service}`).methods[name]
    const req = m.resolvedRequestType!
    const res = m.resolvedResponseType!
    definition[name] = {
      path: `/runtime.v1.${service}/${name}`,
      requestStream: false,
      responseStream: false,
      requestDeserialize: (b: Buffer) => req.toObject(req.decode(b), { longs: Number, enums: String, defaults: true }),
      requestSerialize: (v: Msg) => Buffer.from(req.encode(req.fromObject(v)).finish()),
      responseSerialize: (v: Msg) => Buffer.from(res.encode(res.fromObject(v)).finish()),
      responseDeserialize: (b: Buffer) => res.toObject(res.decode(b))
    }
    const call: handleUnaryCall<Msg, Msg> = (c, cb) => {
      handler(c.request).then(v => cb(null, v), (e: { code: number, details: string }) => cb(e))
    }
    impl[name] = call
  }
  const server = new Server()
  server.addService(definition as ServiceDefinition, impl)
  await new Promise<void>((resolve, reject) => server.bindAsync(`unix://${socket}`, ServerCredentials.createInsecure(),
    err => err !== null ? reject(err) : resolve()))
  return server
}

const dir = mkdtempSync(join(tmpdir(), 'orch-cri-grpc-'))
const runtimeSock = join(dir, 'runtime.sock')
const imageSock = join(dir, 'image.sock')
const seen: Record<string, Msg> = {}
const never = new Promise<Msg>(() => {})
const fail = (code: number, details = 'scripted failure'): Promise<Msg> => Promise.reject(Object.assign(new Error(details), { code, details }))

const runtimeServer = await serve(runtimeSock, 'RuntimeService', {
  // The container id names the gRPC status to fail with, or "hang".
  ContainerStatus: async req => {
    const id = req.containerId as string
    if (id === 'hang') return await never
    return await fail(Number(id.replace('status-', '')))
  },
  RunPodSandbox: async req => { seen.RunPodSandbox = req; return { podSandboxId: 'sb-1' } },
  CreateContainer: async req => {
    if (req.config.metadata.name === 'taken') return await fail(GrpcStatus.UNKNOWN, 'failed to reserve container name "taken_p": name "taken_p" is reserved for "c-0"')
    seen.CreateContainer = req
    return { containerId: 'c-1' }
  },
  StopContainer: async req => { seen.StopContainer = req; return {} }
})
const imageServer = await serve(imageSock, 'ImageService', {
  PullImage: async req => {
    const image = req.image.image as string
    if (image === 'hang') return await never
    if (image === 'slow') { await new Promise(resolve => setTimeout(resolve, 300)); return { imageRef: 'sha256:slow' } }
    return await fail(image === 'down' ? GrpcStatus.UNAVAILABLE : GrpcStatus.NOT_FOUND, 'no such image')
  },
  ListImages: async () => ({ images: [{ id: 'sha256:abc', repoTags: ['x:1'], repoDigests: [], size: 12345 }] })
})

const cri = createCriRuntime({
  runtimeEndpoint: `unix://${runtimeSock}`,
  imageEndpoint: `unix:${imageSock}`,
  requestTimeoutMs: 250,
  pullTimeoutMs: 0
})
t.teardown(async () => {
  await cri.close()
  runtimeServer.forceShutdown()
  imageServer.forceShutdown()
  rmSync(dir, { recursive: true, force: true })
})

t.test('parses unix endpoints and rejects the rest', async t => {
  t.equal(parseCriEndpoint('unix:///run/containerd/containerd.sock'), 'unix:///run/containerd/containerd.sock')
  t.equal(parseCriEndpoint('unix:/run/crio/crio.sock'), 'unix:///run/crio/crio.sock')
  t.equal(parseCriEndpoint('/run/containerd/containerd.sock'), 'unix:///run/containerd/containerd.sock')
  for (const bad of ['tcp://127.0.0.1:1234', 'npipe:////./pipe/x', 'unix://relative.sock', '', 'unix://']) {
    t.throws(() => parseCriEndpoint(bad), { code: 'InvalidArgument' }, JSON.stringify(bad))
  }
  t.throws(() => createCriRuntime({ runtimeEndpoint: 'tcp://x:1' }), { code: 'InvalidArgument' })
})

t.test('maps gRPC status codes to runtime error codes', async t => {
  const table: Array<[number, string]> = [
    [GrpcStatus.NOT_FOUND, 'NotFound'],
    [GrpcStatus.ALREADY_EXISTS, 'AlreadyExists'],
    [GrpcStatus.INVALID_ARGUMENT, 'InvalidArgument'],
    [GrpcStatus.UNIMPLEMENTED, 'Unimplemented'],
    [GrpcStatus.UNAVAILABLE, 'Unavailable'],
    [GrpcStatus.DEADLINE_EXCEEDED, 'DeadlineExceeded'],
    [GrpcStatus.INTERNAL, 'Internal'],
    [GrpcStatus.FAILED_PRECONDITION, 'Internal'],
    [GrpcStatus.UNKNOWN, 'Internal']
  ]
  for (const [grpcCode, code] of table) {
    await t.rejects(cri.runtime.containerStatus(`status-${grpcCode}`),
      { name: 'RuntimeError', code, message: /ContainerStatus: scripted failure/ }, GrpcStatus[grpcCode])
  }
})

t.test('a name already taken on create is AlreadyExists, whatever status code the runtime chose', async t => {
  const sandbox: PodSandboxConfig = {
    metadata: { name: 'p', uid: 'u', namespace: 'ns', attempt: 0 }, logDirectory: '/tmp/x', labels: {}, annotations: {}, hostNetwork: true
  }
  const config = {
    metadata: { name: 'taken', attempt: 0 }, image: { image: 'busybox' }, command: [], args: [], envs: [], mounts: [], labels: {}, annotations: {}, logPath: 'x.log'
  }
  await t.rejects(cri.runtime.createContainer('sb-1', config, sandbox), { code: 'AlreadyExists', message: /is reserved for/ })
})

t.test('a call that outlives the request timeout fails with DeadlineExceeded', async t => {
  const started = Date.now()
  await t.rejects(cri.runtime.containerStatus('hang'), { code: 'DeadlineExceeded' })
  t.ok(Date.now() - started < 2000, 'gave up near the 250ms timeout')
})

t.test('pulls go to the image endpoint, are not bound by the request timeout, and fail as ImagePullFailed', async t => {
  t.equal(await cri.images.pullImage({ image: 'slow' }), 'sha256:slow', 'took 300ms with a 250ms request timeout')
  await t.rejects(cri.images.pullImage({ image: 'missing' }), { code: 'ImagePullFailed', message: /no such image/ })
  await t.rejects(cri.images.pullImage({ image: 'down' }), { code: 'Unavailable' })
  t.same(await cri.images.listImages(), [{ id: 'sha256:abc', repoTags: ['x:1'], repoDigests: [], size: 12345 }])
  const bounded = createCriRuntime({ runtimeEndpoint: `unix://${runtimeSock}`, imageEndpoint: `unix://${imageSock}`, pullTimeoutMs: 100 })
  t.teardown(() => bounded.close())
  await t.rejects(bounded.images.pullImage({ image: 'hang' }), { code: 'DeadlineExceeded' })
})

t.test('a missing socket is Unavailable', async t => {
  const gone = createCriRuntime({ runtimeEndpoint: `unix://${join(dir, 'absent.sock')}` })
  t.teardown(() => gone.close())
  await t.rejects(gone.runtime.version(), { code: 'Unavailable' })
  await t.rejects(gone.images.listImages(), { code: 'Unavailable' })
})

t.test('encodes host network, log paths, resources, env bytes and grace periods as CRI expects', async t => {
  const sandbox: PodSandboxConfig = {
    metadata: { name: 'p', uid: 'u', namespace: 'ns', attempt: 2 },
    hostname: 'box',
    logDirectory: '/var/log/pods/ns_p_u',
    labels: { app: 'x' },
    annotations: { note: 'y' },
    hostNetwork: true,
    cgroupParent: '/orch/pod-u'
  }
  t.equal(await cri.runtime.runPodSandbox(sandbox, 'runc'), 'sb-1')
  const rs = seen.RunPodSandbox
  t.equal(rs.runtimeHandler, 'runc')
  t.match(rs.config, {
    metadata: { name: 'p', uid: 'u', namespace: 'ns', attempt: 2 },
    hostname: 'box',
    logDirectory: '/var/log/pods/ns_p_u',
    labels: { app: 'x' },
    annotations: { note: 'y' },
    linux: { cgroupParent: '/orch/pod-u', securityContext: { namespaceOptions: { network: 'NODE', pid: 'CONTAINER', ipc: 'POD' } } }
  })

  t.equal(await cri.runtime.createContainer('sb-1', {
    metadata: { name: 'c', attempt: 1 },
    image: { image: 'busybox' },
    command: ['sh'],
    args: ['-c', 'true'],
    workingDir: '/tmp',
    envs: [{ key: 'A', value: 'ä=1' }],
    mounts: [{ containerPath: '/data', hostPath: '/srv/data', readonly: true }],
    labels: {},
    annotations: {},
    logPath: 'c/1.log',
    resources: { memoryLimitInBytes: 3 * 1024 ** 3, cpuQuota: 50_000, cpuPeriod: 100_000, cpuShares: 512 }
  }, { ...sandbox, hostNetwork: false }), 'c-1')
  const cc = seen.CreateContainer
  t.equal(cc.podSandboxId, 'sb-1')
  t.equal(Buffer.from(cc.config.envs[0].value).toString('utf8'), 'ä=1')
  t.match(cc.config, {
    metadata: { name: 'c', attempt: 1 },
    command: ['sh'],
    args: ['-c', 'true'],
    workingDir: '/tmp',
    logPath: 'c/1.log',
    mounts: [{ containerPath: '/data', hostPath: '/srv/data', readonly: true }],
    linux: {
      resources: { memoryLimitInBytes: 3 * 1024 ** 3, cpuQuota: 50_000, cpuPeriod: 100_000, cpuShares: 512 },
      securityContext: { namespaceOptions: { network: 'POD' } }
    }
  })
  t.equal(cc.sandboxConfig.logDirectory, '/var/log/pods/ns_p_u')

  await cri.runtime.stopContainer('c-1', 30)
  t.equal(seen.StopContainer.timeout, 30)
})
