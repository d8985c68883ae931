// --qos-reserved (QOSReserved gate): the burstable and besteffort tiers' memory limits that keep higher QoS pods' requests free.

import { qosClass } from '../pods/pod-status.js'
import type { Pod } from '../pods/pod-types.js'
import { podTotal } from './pod-totals.js'

export interface QosMemoryRequests { Guaranteed: number, Burstable: number }

/** getQoSMemoryRequests: the summed memory requests of the Guaranteed and of the Burstable pods (BestEffort pods request none). */
export function qosMemoryRequests (pods: readonly Pod[]): QosMemoryRequests {
  const out: QosMemoryRequests = { Guaranteed: 0, Burstable: 0 }
  for (const pod of pods) {
    const qos = qosClass(pod)
    if (qos !== 'Guaranteed' && qos !== 'Burstable') continue
    out[qos] += Math.ceil(podTotal(pod, 'requests', 'memory').value)
  }
  return out
}

/**
 * setMemoryReserve: burstable = allocatable − guaranteed requests × pct; besteffort = burstable − burstable requests × pct
 * (integer percent of whole bytes, truncated). A limit below zero (requests above allocatable) is held at 0: the
 * cgroup drivers read a negative limit as "no limit", the opposite of what a reservation asks.
 */
export function qosReservedMemoryLimits (requests: QosMemoryRequests, allocatableBytes: number, percent: number): { burstable: number, bestEffort: number } {
  const burstable = allocatableBytes - Math.floor(requests.Guaranteed * percent / 100)
  const bestEffort = burstable - Math.floor(requests.Burstable * percent / 100)
  return { burstable: Math.max(0, burstable), bestEffort: Math.max(0, bestEffort) }
}
