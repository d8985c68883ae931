// Registers this node with the API server, posts its status every period and renews its Lease; records node events.

import type { ApiClient, JsonObject } from '../../apiserver/client/rest-client.js'
import { isAlreadyExists, isConflict, isNotFound } from '../../apiserver/client/rest-client.js'
import { ANNOTATION_CONTROLLER_ATTACH_DETACH, buildNode, buildNodeStatus, microTime, type NodeHealth, type NodeSpecInput, type NodeStatusInput } from './node-object.js'
import type { MachineFacts } from './node-info.js'
import type { EventRecorder, ObjectReference } from '../events/recorder.js'

export interface NodeManagerOptions {
  client: ApiClient
  spec: NodeSpecInput
  facts: MachineFacts
  registerNode: boolean
  statusUpdateFrequencyMs: number
  leaseDurationSeconds: number
  /** Everything but health, recomputed at each post (capacity can change with reservations). */
  statusInput: () => Promise<Omit<NodeStatusInput, 'health'>>
  health: () => Promise<NodeHealth>
  now: () => number
  logger: { info(o: object, m?: string): void; warn(o: object, m?: string): void }
  /** Node events (Starting, NodeReady, NodeNotReady, pressure transitions). */
  recorder: EventRecorder
}

/** The kubelet's event reasons for a condition's status (index 0: True, 1: False). */
const CONDITION_EVENTS: Record<string, [string, string]> = {
  MemoryPressure: ['NodeHasInsufficientMemory', 'NodeHasSufficientMemory'],
  DiskPressure: ['NodeHasDiskPressure', 'NodeHasNoDiskPressure'],
  PIDPressure: ['NodeHasInsufficientPID', 'NodeHasSufficientPID'],
  Ready: ['NodeReady', 'NodeNotReady']
}

/** Events for each condition whose status differs from the one the API server held (all of them for a new node). */
export function conditionEvents (nodeName: string, previous: Array<{ type: string; status: string }>, next: Array<{ type: string; status: string }>): Array<{ type: 'Normal'; reason: string; message: string }> {
  const out: Array<{ type: 'Normal'; reason: string; message: string }> = []
  for (const c of next) {
    const reasons = CONDITION_EVENTS[c.type]
    if (reasons === undefined || previous.find(p => p.type === c.type)?.status === c.status) continue
    const reason = reasons[c.status === 'True' ? 0 : 1]
    out.push({ type: 'Normal', reason, message: `Node ${nodeName} status is now: ${reason}` })
  }
  return out
}

export interface NodeManager {
  /** Creates the Node (or adopts an existing one), then posts a first status. Retries until it succeeds or stop(). */
  register(): Promise<void>
  /** Starts the status and lease loops. */
  start(): void
  /** Posts status now (e.g. after a pressure change). */
  postStatus(): Promise<void>
  stop(): Promise<void>
}

/** Where node leases live: orch's namespace, and Kubernetes' (where `kubectl describe node` looks) when the server has it. */
const LEASE_PLACES = [
  { group: 'coordination.orch.io', namespace: 'orch-node-lease', required: true },
  { group: 'coordination.k8s.io', namespace: 'kube-node-lease', required: false }
]

export function createNodeManager (o: NodeManagerOptions): NodeManager {
  const name = o.spec.nodeName
  const nodePath = `/api/v1/nodes/${name}`
  const timers: NodeJS.Timeout[] = []
  let stopped = false
  let nodeUID = ''
  // As the kubelet does, node events name the node by its name in the uid field.
  const nodeRef: ObjectReference = { kind: 'Node', name, uid: name }

  async function ensureNode (): Promise<void> {
    const desired = buildNode(o.spec, o.facts)
    try {
      const created = await o.client.create('/api/v1/nodes', desired)
      nodeUID = String((created.metadata as JsonObject).uid)
      o.logger.info({ node: name }, 'registered node')
    } catch (err) {
      if (!isAlreadyExists(err)) throw err
      const existing = await o.client.get(nodePath)
      nodeUID = String((existing.metadata as JsonObject).uid)
      // Keep labels we own up to date on an existing node, as the kubelet reconciles its own labels,
      // and the attach/detach annotation (reconcileCMADAnnotationWithExistingNode).
      const meta = existing.metadata as JsonObject
      const labels = { ...(meta.labels as Record<string, string> | undefined), ...((desired.metadata as JsonObject).labels as Record<string, string>) }
      const annotations = { ...(meta.annotations as Record<string, string> | undefined) }
      if (o.spec.controllerManagedAttachDetach === true) annotations[ANNOTATION_CONTROLLER_ATTACH_DETACH] = 'true'
      else delete annotations[ANNOTATION_CONTROLLER_ATTACH_DETACH]
      await o.client.update(nodePath, { ...existing, metadata: { ...meta, labels, annotations } })
      o.logger.info({ node: name }, 'node already registered; adopted it')
    }
  }

  async function postStatus (): Promise<void> {
    for (let attempt = 0; attempt < 5; attempt++) {
      const node = await o.client.get(nodePath, { exempt: true })
      const prev = ((node.status as JsonObject | undefined)?.conditions ?? []) as Parameters<typeof buildNodeStatus>[2]
      const input: NodeStatusInput = { ...(await o.statusInput()), health: await o.health() }
      const status = buildNodeStatus(input, o.now(), prev)
      try {
        await o.client.update(`${nodePath}/status`, { ...node, status }, { exempt: true })
        for (const e of conditionEvents(name, prev as Array<{ type: string; status: string }>, status.conditions as Array<{ type: string; status: string }>)) o.recorder.event(nodeRef, e.type, e.reason, e.message)
        return
      } catch (err) {
        if (!isConflict(err)) throw err
      }
    }
    throw new Error('node status update kept conflicting')
  }

  async function renewLease (): Promise<void> {
    for (const place of LEASE_PLACES) {
      try {
        await renewLeaseIn(place.group, place.namespace)
      } catch (err) {
        // Kubernetes' lease namespace exists only when the server serves the upstream names: its absence is no error.
        if (place.required || !isNotFound(err)) throw err
      }
    }
  }

  async function renewLeaseIn (group: string, namespace: string): Promise<void> {
    const leases = `/apis/${group}/v1/namespaces/${namespace}/leases`
    const spec = { holderIdentity: name, leaseDurationSeconds: o.leaseDurationSeconds, renewTime: microTime(o.now()) }
    try {
      const lease = await o.client.get(`${leases}/${name}`, { exempt: true })
      await o.client.update(`${leases}/${name}`, { ...lease, spec: { ...(lease.spec as JsonObject), ...spec } }, { exempt: true })
    } catch (err) {
      if (!isNotFound(err)) throw err
      await o.client.create(leases, {
        apiVersion: `${group}/v1`,
        kind: 'Lease',
        metadata: {
          name,
          namespace,
          ownerReferences: nodeUID ? [{ apiVersion: 'v1', kind: 'Node', name, uid: nodeUID }] : undefined
        },
        spec: { ...spec, acquireTime: spec.renewTime }
      }, { exempt: true })
    }
  }


  function every (ms: number, what: string, fn: () => Promise<void>): void {
    const timer = setInterval(() => {
      if (stopped) return
      fn().catch(err => o.logger.warn({ err: (err as Error).message }, `${what} failed`))
    }, ms)
    timer.unref()
    timers.push(timer)
  }

  return {
    async register () {
      o.recorder.event(nodeRef, 'Normal', 'Starting', 'Starting orchlet.')
      let delay = 200
      while (!stopped) {
        try {
          if (o.registerNode) await ensureNode()
          await postStatus()
          await renewLease()
          return
        } catch (err) {
          o.logger.warn({ err: (err as Error).message, retryInMs: delay }, 'node registration failed')
          await new Promise(resolve => setTimeout(resolve, delay))
          delay = Math.min(delay * 2, 7000)
        }
      }
    },
    start () {
      every(o.statusUpdateFrequencyMs, 'node status update', postStatus)
      every(Math.max(1000, o.leaseDurationSeconds * 250), 'lease renewal', renewLease)
    },
    postStatus,
    async stop () {
      stopped = true
      for (const t of timers) clearInterval(t)
    }
  }
}
