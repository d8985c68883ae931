// Translates a pod and one of its containers into the runtime's sandbox and container configuration.

import { join } from 'node:path'
import type { ApiClient } from '../../apiserver/client/rest-client.js'
import type { ContainerConfig, LinuxContainerResources, PodSandboxConfig } from '../runtime/runtime.js'
import { parseQuantity } from '../config/quantity.js'
import type { Container, EnvVar, Pod } from './pod-types.js'
import { containerMounts } from './volumes.js'

export class ContainerConfigError extends Error {
  constructor (message: string) { super(message); this.name = 'ContainerConfigError' }
}

export const LABEL_POD_NAME = 'io.orch.pod.name'
export const LABEL_POD_NAMESPACE = 'io.orch.pod.namespace'
export const LABEL_POD_UID = 'io.orch.pod.uid'
export const LABEL_CONTAINER_NAME = 'io.orch.container.name'

/** The pod's log folder, as the kubelet lays it out: <logs>/<namespace>_<name>_<uid>. */
export function podLogDir (logsRoot: string, pod: Pod): string {
  return join(logsRoot, `${pod.metadata.namespace}_${pod.metadata.name}_${pod.metadata.uid}`)
}

export function sandboxConfig (pod: Pod, logsRoot: string, attempt: number): PodSandboxConfig {
  return {
    metadata: { name: pod.metadata.name, namespace: pod.metadata.namespace, uid: pod.metadata.uid, attempt },
    // The host's own name stays for host-network pods (runc cannot set one without a UTS namespace).
    hostname: pod.spec.hostNetwork === true ? undefined : (pod.spec.hostname ?? pod.metadata.name),
    logDirectory: podLogDir(logsRoot, pod),
    labels: { ...pod.metadata.labels, [LABEL_POD_NAME]: pod.metadata.name, [LABEL_POD_NAMESPACE]: pod.metadata.namespace, [LABEL_POD_UID]: pod.metadata.uid },
    annotations: { ...pod.metadata.annotations },
    hostNetwork: pod.spec.hostNetwork === true
  }
}

/** Kubernetes' $(VAR) expansion: known names are replaced, $$ escapes, unknown references stay as written. */
export function expandVars (text: string, vars: Map<string, string>): string {
  return text.replace(/\$\$|\$\(([-._a-zA-Z][-._a-zA-Z0-9]*)\)/g, (whole, name: string | undefined) => {
    if (whole === '$$') return '$'
    const v = vars.get(name!)
    return v === undefined ? whole : v
  })
}

function fieldRef (pod: Pod, path: string, hostIP: string, podIP: string): string {
  const label = /^metadata\.labels\['(.+)'\]$/.exec(path)
  if (label) return pod.metadata.labels?.[label[1]!] ?? ''
  const ann = /^metadata\.annotations\['(.+)'\]$/.exec(path)
  if (ann) return pod.metadata.annotations?.[ann[1]!] ?? ''
  switch (path) {
    case 'metadata.name': return pod.metadata.name
    case 'metadata.namespace': return pod.metadata.namespace
    case 'metadata.uid': return pod.metadata.uid
    case 'spec.nodeName': return pod.spec.nodeName ?? ''
    case 'spec.serviceAccountName': return String((pod.spec as unknown as Record<string, unknown>).serviceAccountName ?? '')
    case 'status.hostIP': return hostIP
    case 'status.podIP': return podIP
    default: throw new ContainerConfigError(`unsupported fieldRef fieldPath "${path}"`)
  }
}

async function keyRef (client: ApiClient | undefined, kind: 'configmaps' | 'secrets', namespace: string, ref: { name?: string; key?: string; optional?: boolean }): Promise<string | undefined> {
  if (client === undefined) throw new ContainerConfigError(`${kind} references need an API server connection`)
  try {
    const obj = await client.get(`/api/v1/namespaces/${namespace}/${kind}/${ref.name ?? ''}`)
    const raw = (obj.data as Record<string, string> | undefined)?.[ref.key ?? '']
    if (raw === undefined) {
      if (ref.optional === true) return undefined
      throw new ContainerConfigError(`couldn't find key ${ref.key ?? ''} in ${kind === 'secrets' ? 'Secret' : 'ConfigMap'} ${namespace}/${ref.name ?? ''}`)
    }
    return kind === 'secrets' ? Buffer.from(raw, 'base64').toString('utf8') : raw
  } catch (err) {
    if (err instanceof ContainerConfigError) throw err
    if (ref.optional === true) return undefined
    throw new ContainerConfigError(`${kind === 'secrets' ? 'secret' : 'configmap'} "${ref.name ?? ''}" not found`)
  }
}

/** Resolves env in order: each value may refer to earlier ones with $(NAME). */
export async function resolveEnv (pod: Pod, c: Container, hostIP: string, client?: ApiClient, podIP: string = hostIP): Promise<Map<string, string>> {
  const vars = new Map<string, string>()
  for (const e of c.env ?? [] as EnvVar[]) {
    let value: string | undefined
    if (e.valueFrom === undefined) value = expandVars(e.value ?? '', vars)
    else {
      const from = e.valueFrom as { fieldRef?: { fieldPath: string }; configMapKeyRef?: { name?: string; key?: string; optional?: boolean }; secretKeyRef?: { name?: string; key?: string; optional?: boolean }; resourceFieldRef?: { resource: string } }
      if (from.fieldRef) value = fieldRef(pod, from.fieldRef.fieldPath, hostIP, podIP)
      else if (from.configMapKeyRef) value = await keyRef(client, 'configmaps', pod.metadata.namespace, from.configMapKeyRef)
      else if (from.secretKeyRef) value = await keyRef(client, 'secrets', pod.metadata.namespace, from.secretKeyRef)
      else if (from.resourceFieldRef) {
        const [kind, res] = from.resourceFieldRef.resource.split('.') as ['limits' | 'requests', string]
        const q = c.resources?.[kind]?.[res]
        value = q === undefined ? '0' : String(res === 'cpu' ? Math.ceil(parseQuantity(q)) : Math.ceil(parseQuantity(q)))
      }
    }
    if (value !== undefined) vars.set(e.name, value)
  }
  return vars
}

export function linuxResources (c: Container, cpuCfsQuota: boolean, cfsPeriodUs: number): LinuxContainerResources {
  const limits = c.resources?.limits ?? {}
  const requests = c.resources?.requests ?? {}
  const out: LinuxContainerResources = {}
  if (limits.memory !== undefined) out.memoryLimitInBytes = Math.ceil(parseQuantity(limits.memory))
  const cpuRequest = requests.cpu ?? limits.cpu
  if (cpuRequest !== undefined) out.cpuShares = Math.max(2, Math.floor(parseQuantity(cpuRequest) * 1024))
  else out.cpuShares = 2
  if (limits.cpu !== undefined && cpuCfsQuota) {
    out.cpuPeriod = cfsPeriodUs
    out.cpuQuota = Math.max(1000, Math.ceil(parseQuantity(limits.cpu) * cfsPeriodUs))
  }
  return out
}

export interface ContainerConfigInput {
  pod: Pod
  container: Container
  attempt: number
  volumes: Map<string, string>
  hostIP: string
  /** The sandbox's IP (status.podIP); the host IP when absent. */
  podIP?: string
  client?: ApiClient
  cpuCfsQuota: boolean
  cfsPeriodUs: number
}

export async function containerConfig (i: ContainerConfigInput): Promise<ContainerConfig> {
  const { pod, container: c } = i
  const env = await resolveEnv(pod, c, i.hostIP, i.client, i.podIP ?? i.hostIP)
  return {
    metadata: { name: c.name, attempt: i.attempt },
    image: { image: c.image },
    command: (c.command ?? []).map(s => expandVars(s, env)),
    args: (c.args ?? []).map(s => expandVars(s, env)),
    workingDir: c.workingDir,
    envs: [...env].map(([key, value]) => ({ key, value })),
    mounts: containerMounts(pod, c.volumeMounts, i.volumes),
    labels: { [LABEL_POD_NAME]: pod.metadata.name, [LABEL_POD_NAMESPACE]: pod.metadata.namespace, [LABEL_POD_UID]: pod.metadata.uid, [LABEL_CONTAINER_NAME]: c.name },
    annotations: { 'io.orch.container.restartCount': String(i.attempt) },
    logPath: join(c.name, `${i.attempt}.log`),
    resources: linuxResources(c, i.cpuCfsQuota, i.cfsPeriodUs),
    stdin: c.stdin,
    tty: c.tty
  }
}
