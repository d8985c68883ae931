// A Pod's Table cells, following kube-apiserver 1.29's printPod (READY, STATUS, RESTARTS and the wide columns).

import { humanDuration, timeOf } from './print-format.js'

type Obj = Record<string, any> // eslint-disable-line @typescript-eslint/no-explicit-any
type Printer = (object: Obj, now: number) => unknown

interface PodSummary { ready: number; total: number; reason: string; restarts: number; lastRestart?: number }

const isRestartable = (c: Obj | undefined): boolean => c?.restartPolicy === 'Always'
const hasCondition = (pod: Obj, type: string): boolean =>
  ((pod.status?.conditions ?? []) as Obj[]).some(c => c.type === type && c.status === 'True')

function terminatedReason (t: Obj, prefix: string): string {
  if (t.reason) return prefix + String(t.reason)
  return t.signal ? `${prefix}Signal:${t.signal}` : `${prefix}ExitCode:${t.exitCode ?? 0}`
}

/** printPod's walk over init and app container statuses, in the same order and with the same precedence. */
function summarize (pod: Obj): PodSummary {
  const status = pod.status ?? {}
  const initSpecs = new Map(((pod.spec?.initContainers ?? []) as Obj[]).map(c => [c.name, c]))
  let total = ((pod.spec?.containers ?? []) as Obj[]).length
  for (const c of initSpecs.values()) if (isRestartable(c)) total++
  let reason: string = status.reason || status.phase || ''
  if (((status.conditions ?? []) as Obj[]).some(c => c.type === 'PodScheduled' && c.reason === 'SchedulingGated')) reason = 'SchedulingGated'
  let ready = 0
  let restarts = 0
  let lastRestart: number | undefined
  let sidecarRestarts = 0
  let sidecarLast: number | undefined
  const later = (a: number | undefined, s: Obj): number | undefined => {
    const t = timeOf(s.lastState?.terminated?.finishedAt)
    return t !== undefined && (a === undefined || t > a) ? t : a
  }
  let initializing = false
  const inits = (status.initContainerStatuses ?? []) as Obj[]
  for (let i = 0; i < inits.length; i++) {
    const s = inits[i]!
    const restartable = isRestartable(initSpecs.get(s.name))
    restarts += s.restartCount ?? 0
    lastRestart = later(lastRestart, s)
    if (restartable) { sidecarRestarts += s.restartCount ?? 0; sidecarLast = later(sidecarLast, s) }
    const term = s.state?.terminated
    if (term && (term.exitCode ?? 0) === 0) continue
    if (restartable && s.started === true) { if (s.ready === true) ready++; continue }
    initializing = true
    if (term) reason = terminatedReason(term, 'Init:')
    else if (s.state?.waiting?.reason && s.state.waiting.reason !== 'PodInitializing') reason = `Init:${s.state.waiting.reason}`
    else reason = `Init:${i}/${initSpecs.size}`
    break
  }
  if (!initializing || hasCondition(pod, 'Initialized')) {
    restarts = sidecarRestarts
    lastRestart = sidecarLast
    let running = false
    const list = (status.containerStatuses ?? []) as Obj[]
    for (let i = list.length - 1; i >= 0; i--) {
      const s = list[i]!
      restarts += s.restartCount ?? 0
      lastRestart = later(lastRestart, s)
      if (s.state?.waiting?.reason) reason = s.state.waiting.reason
      else if (s.state?.terminated) reason = terminatedReason(s.state.terminated, '')
      else if (s.ready === true && s.state?.running) { running = true; ready++ }
    }
    if (reason === 'Completed' && running) reason = hasCondition(pod, 'Ready') ? 'Running' : 'NotReady'
  }
  if (pod.metadata?.deletionTimestamp) {
    if (status.reason === 'NodeLost') reason = 'Unknown'
    else if (status.phase !== 'Succeeded' && status.phase !== 'Failed') reason = 'Terminating'
  }
  return { ready, total, reason, restarts, lastRestart }
}

const orNone = (v: unknown): string => (typeof v === 'string' && v !== '' ? v : '<none>')

export const POD_PRINTERS: Readonly<Record<string, Printer>> = {
  podReady: pod => { const s = summarize(pod); return `${s.ready}/${s.total}` },
  podStatus: pod => summarize(pod).reason,
  /** RESTARTS: `3`, or `3 (5m ago)` when the last restart's end is known. */
  podRestarts: (pod, now) => {
    const s = summarize(pod)
    return s.restarts !== 0 && s.lastRestart !== undefined ? `${s.restarts} (${humanDuration(now - s.lastRestart)} ago)` : String(s.restarts)
  },
  podIP: pod => orNone(pod.status?.podIPs?.[0]?.ip ?? pod.status?.podIP),
  podNode: pod => orNone(pod.spec?.nodeName),
  podNominatedNode: pod => orNone(pod.status?.nominatedNodeName),
  podReadinessGates: pod => {
    const gates: Obj[] = pod.spec?.readinessGates ?? []
    if (gates.length === 0) return '<none>'
    const conds: Obj[] = pod.status?.conditions ?? []
    const ready = gates.filter(g => conds.find(c => c.type === g.conditionType)?.status === 'True').length
    return `${ready}/${gates.length}`
  }
}
