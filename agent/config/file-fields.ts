// The settings only an OrchletConfiguration file holds (no flag), as the kubelet's shutdownGracePeriod is file-only.

import * as k from './kinds.js'
import type { FileKind } from './kinds.js'

export interface FieldSpec<K extends string = string, T = any> {
  /** Property of OrchletConfig that holds the value. */
  readonly key: K
  readonly kind: FileKind<T>
  /** Dotted path in OrchletConfiguration. */
  readonly field: string
  /** Default in the file's own form, decoded by the kind (absent: the kind's zero value). */
  readonly default?: unknown
  readonly help: string
}

function fileOnly<K extends string, T> (field: K, kind: FileKind<T>, help: string, extra: { default?: unknown } = {}): FieldSpec<K, T> {
  return { key: field, kind, field, help, ...extra }
}

export const FILE_FIELDS = [
  fileOnly('shutdownGracePeriod', k.duration, 'How long a node shutdown (SIGTERM) is delayed to stop pods: regular pods first, then critical pods; 0 turns graceful node shutdown off', { default: '0s' }),
  fileOnly('shutdownGracePeriodCriticalPods', k.duration, 'The part of shutdownGracePeriod kept for critical pods (priority 2000000000 and above), stopped after all others; at most shutdownGracePeriod', { default: '0s' }),
  fileOnly('tracing', k.tracingConfig, 'Tracing client: export spans of pod syncs and CRI calls over OTLP/gRPC to endpoint (default localhost:4317) at samplingRatePerMillion (unset: only when the parent is sampled); needs the OrchletTracing gate'),
  fileOnly('shutdownGracePeriodByPodPriority', k.priorityGracePeriods, 'Instead of the two above: shutdown grace periods by pod priority ([{priority, shutdownGracePeriodSeconds}]); pods go from the lowest priority band up'),
  fileOnly('imageMaximumGCAge', k.duration, 'Images unused for longer than this are removed whatever the disk use; 0 turns it off; must be above imageMinimumGCAge; needs the ImageMaximumGCAge gate', { default: '0s' }),
  fileOnly('localStorageCapacityIsolation', k.bool, 'Evict pods whose containers exceed their ephemeral-storage limit, whose emptyDir exceeds its sizeLimit, or whose total use exceeds the pod\'s limit', { default: true })
] as const

type AnyField = typeof FILE_FIELDS[number]

/** The value of every file-only field, by key. */
export type FieldValues = { -readonly [F in AnyField as F['key']]: F extends FieldSpec<string, infer T> ? T : never }
