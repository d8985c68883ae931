// The named conversions of ResourceDefinition.conversion: an object of one version of a kind to another version's apiVersion.
import type { ResourceDefinition } from '../../schema/types.js'
import type { Obj } from '../object-meta.js'
import { convertEvent } from './event.js'
import { convertFlowcontrol } from './flowcontrol.js'
import { hpaToV1, hpaToV2 } from './hpa.js'

/** Converts `obj` (any version of the kind) to `apiVersion`; never mutates `obj`. */
export type Conversion = (obj: Obj, apiVersion: string) => Obj

const conversions: Record<NonNullable<ResourceDefinition['conversion']>, Conversion> = {
  hpa: (obj, apiVersion) => apiVersion.endsWith('/v1') ? hpaToV1(obj, apiVersion) : hpaToV2(obj, apiVersion),
  event: convertEvent,
  flowcontrol: convertFlowcontrol,
}

/** The conversion of a definition; without one, only apiVersion changes. */
export function conversionOf (def: Pick<ResourceDefinition, 'conversion'>): Conversion {
  return def.conversion === undefined ? (obj, apiVersion) => ({ ...obj, apiVersion }) : conversions[def.conversion]
}
