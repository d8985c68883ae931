// The node status's `images` list (the kubelet's Images setter) and the Ready condition's runtime errors, in the kubelet's words.

import type { Image, RuntimeCondition } from '../runtime/runtime.js'

/** The kubelet reports at most this many names per image (MaxNamesPerImageInNodeStatus). */
export const MAX_NAMES_PER_IMAGE = 5

export interface NodeImage { names: string[]; sizeBytes: number }

/**
 * Images of every runtime, largest first (ties by id, as the kubelet's image cache sorts), cut to
 * `max` (-1: all); names are the repo digests then the repo tags, at most five.
 */
export function nodeImages (images: Image[], max: number): NodeImage[] {
  const sorted = [...images].sort((a, b) => b.size - a.size || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0))
  const kept = max > -1 && max < sorted.length ? sorted.slice(0, max) : sorted
  return kept.map(i => ({ names: [...i.repoDigests, ...i.repoTags].slice(0, MAX_NAMES_PER_IMAGE), sizeBytes: i.size }))
}

/** Go's %v of the kubelet's RuntimeCondition: `Type=bool reason:R message:M`. */
function conditionText (c: RuntimeCondition | undefined): string {
  return c === undefined ? '<nil>' : `${c.type}=${String(c.status)} reason:${c.reason} message:${c.message}`
}

/**
 * The Ready condition's message from the runtime's Status (kubelet's updateRuntimeUp and runtimeState):
 * runtime errors first, then network errors, joined as apimachinery's aggregate error prints them.
 * `undefined` status means the call failed: the runtime is down.
 */
export function runtimeReadyErrors (status: { conditions: RuntimeCondition[] } | undefined): string[] {
  if (status === undefined) return ['container runtime is down']
  const errs: string[] = []
  const runtime = status.conditions.find(c => c.type === 'RuntimeReady')
  if (runtime === undefined || !runtime.status) errs.push(`container runtime not ready: ${conditionText(runtime)}`)
  const network = status.conditions.find(c => c.type === 'NetworkReady')
  if (network === undefined || !network.status) errs.push(`container runtime network not ready: ${conditionText(network)}`)
  return errs
}

/** apimachinery's aggregate Error(): one message alone, several (deduplicated) as `[a, b]`. */
export function aggregateMessage (errs: string[]): string {
  const unique = [...new Set(errs)]
  return unique.length === 1 ? unique[0]! : unique.length === 0 ? '' : `[${unique.join(', ')}]`
}
