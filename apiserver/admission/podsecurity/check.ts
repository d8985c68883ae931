// The shape of one Pod Security Standards control, and the controls that make up a level at a version.

import type { Level } from './levels.js'
import type { PodView, Violation } from './pod-view.js'

export interface Check {
  /** The policy library's check id; checks of a level are reported in id order. */
  id: string
  level: Exclude<Level, 'privileged'>
  /** The first policy minor version the control applies at. */
  minMinor: number
  /** Ids of baseline checks this (restricted) check supersedes from `overridesFromMinor` on. */
  overrides?: string[]
  overridesFromMinor?: number
  /** The finding at policy minor `minor`, or undefined when the pod satisfies the control. */
  check(pod: PodView, minor: number): Violation | undefined
}
