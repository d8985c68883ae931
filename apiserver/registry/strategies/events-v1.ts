// events.k8s.io/v1 Events: what v1 requires of a new event beyond its schema (spec §9.4's row for events v1).
//
// A new event names who reports it and what happened (reportingController, reportingInstance, action, reason), has
// type Normal or Warning, and leaves the deprecated* fields (core v1's firstTimestamp, count, source, ...) unset.
import type { FieldError } from '../../schema/types.js'
import { invalid, notSupported, required, tooLongBytes } from '../../schema/field-errors.js'
import type { Strategy } from '../strategy.js'
import type { Obj } from '../object-meta.js'

const NOTE_MAX_BYTES = 1024
const DEPRECATED = ['deprecatedSource', 'deprecatedFirstTimestamp', 'deprecatedLastTimestamp', 'deprecatedCount'] as const

function createErrors (e: Obj): FieldError[] {
  const errs: FieldError[] = []
  if (e.eventTime === undefined || e.eventTime === null || e.eventTime === '') errs.push(required('eventTime'))
  for (const f of ['reportingController', 'reportingInstance', 'action', 'reason'] as const) {
    if (typeof e[f] !== 'string' || e[f] === '') errs.push(required(f))
  }
  for (const f of DEPRECATED) if (e[f] !== undefined && e[f] !== null) errs.push(invalid(f, '', 'needs to be unset'))
  return errs
}

export const eventsV1Strategy: Strategy = {
  validateTransition (obj, old) {
    const errs = old === undefined ? createErrors(obj) : []
    if (obj.type !== 'Normal' && obj.type !== 'Warning') errs.push(notSupported('type', obj.type ?? '', ['Normal', 'Warning']))
    if (typeof obj.note === 'string' && Buffer.byteLength(obj.note) > NOTE_MAX_BYTES) errs.push(tooLongBytes('note', NOTE_MAX_BYTES))
    return errs
  }
}
