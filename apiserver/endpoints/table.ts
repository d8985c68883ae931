// The Table view (spec 2.5): column definitions from the kind's printer columns, one row per object.
//
// Columns follow kube-apiserver 1.29:
// - built-in kinds: the catalog's columns as Kubernetes' printers (pkg/printers/internalversion) define them;
//   a list holding a `format: name` column is the whole table (events: Name is wide-only and last, no Age),
//   otherwise Name goes first and Age is appended unless listed. Missing values print as Go zero values
//   (`0`, `""`), never as empty (null) cells, which kubectl would show as `<none>`.
// - a built-in kind without columns (the CRD resource itself): Name + `Created At` (type date, RFC 3339),
//   as Kubernetes' default table convertor does.
// - custom resources: Name + the CRD's additionalPrinterColumns; without any, Name + Age (apiextensions'
//   serveDefaultColumnsIfEmpty), not Created At. Date columns keep type `date`; missing values are null.

import type { IncludeObject } from './negotiate.js'
import type { PrinterColumn, ResourceDefinition } from '../schema/types.js'
import { compileJsonPath } from './jsonpath.js'
import { COLUMN_PRINTERS } from './printers.js'
import { humanDuration } from './print-format.js'

export { humanDuration }

export interface TableColumn { name: string; type: string; format: string; description: string; priority: number }

export interface TableListMeta { resourceVersion?: string; continue?: string; remainingItemCount?: number }

/** Converts objects of one kind to Table rows; built once per definition and reused. */
export interface TableConvertor {
  columns: TableColumn[]
  row(object: Record<string, unknown>): { cells: unknown[]; object: Record<string, unknown> }
}

const NAME_DESCRIPTION = 'Name must be unique within a namespace. Cannot be updated.'
const AGE_DESCRIPTION = 'CreationTimestamp is a timestamp representing the server time when this object was created.'
const NAME_COLUMN: PrinterColumn = { name: 'Name', type: 'string', format: 'name', jsonPath: '.metadata.name', description: NAME_DESCRIPTION }
const CREATED_AT_COLUMN: TableColumn = { name: 'Created At', type: 'date', format: '', priority: 0, description: AGE_DESCRIPTION }
const AGE_COLUMN: PrinterColumn = { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp', description: AGE_DESCRIPTION }

type Evaluate = (object: Record<string, unknown>, now: number) => unknown[]

/** `now` is injected so ages are testable. */
export function createTableConvertor (def: ResourceDefinition, now: () => number): TableConvertor {
  const custom = def.custom !== undefined
  const declared = def.printerColumns
  if (!custom && declared.length === 0) return createdAtConvertor()
  let layout: PrinterColumn[]
  if (custom) layout = [NAME_COLUMN, ...(declared.length > 0 ? declared : [AGE_COLUMN])]
  else if (declared.some(c => c.format === 'name')) layout = declared
  else layout = [NAME_COLUMN, ...declared, ...(declared.some(c => c.name === 'Age') ? [] : [AGE_COLUMN])]
  return columnsConvertor(layout, custom, now)
}

/** The Table of autoscaling/v1 Scale (`kubectl get --subresource=scale`): printScale's columns. */
export function createScaleTableConvertor (now: () => number): TableConvertor {
  return columnsConvertor([
    { name: 'Name', type: 'string', jsonPath: '.metadata.name', description: NAME_DESCRIPTION },
    { name: 'Desired', type: 'integer', jsonPath: '', printer: 'scaleDesired', description: 'desired number of instances for the scaled object.' },
    { name: 'Available', type: 'integer', jsonPath: '', printer: 'scaleAvailable', description: 'actual number of observed instances of the scaled object.' },
    AGE_COLUMN
  ], false, now)
}

function createdAtConvertor (): TableConvertor {
  return {
    columns: [tableColumn(NAME_COLUMN, false), CREATED_AT_COLUMN],
    row (object) {
      const meta = (object.metadata ?? {}) as Record<string, unknown>
      return { cells: [meta.name ?? '', meta.creationTimestamp ?? null], object: meta }
    }
  }
}

function columnsConvertor (layout: PrinterColumn[], custom: boolean, now: () => number): TableConvertor {
  const evaluators = layout.map(c => ({ column: c, eval: evaluator(c, custom) }))
  return {
    columns: layout.map(c => tableColumn(c, custom)),
    row (object) {
      const meta = (object.metadata ?? {}) as Record<string, unknown>
      const t = now()
      return { cells: evaluators.map(e => cell(e.column, e.eval(object, t), t, custom)), object: meta }
    }
  }
}

function tableColumn (c: PrinterColumn, custom: boolean): TableColumn {
  // Built-in printers serve ages as text ("5m") in string columns; a CRD's date columns stay `date`.
  return {
    name: c.name, type: c.type === 'date' && !custom ? 'string' : c.type, format: c.format ?? '',
    description: c.description ?? '', priority: c.priority ?? 0
  }
}

function evaluator (c: PrinterColumn, custom: boolean): Evaluate {
  const computed = c.printer === undefined || custom ? undefined : COLUMN_PRINTERS[c.printer]
  if (computed !== undefined) return (o, now) => [computed(o, now)]
  const path = safeCompile(c.jsonPath)
  return o => path(o)
}

function safeCompile (path: string): (root: unknown) => unknown[] {
  try { return compileJsonPath(path) } catch { return () => [] }
}

function cell (column: PrinterColumn, values: unknown[], now: number, custom: boolean): unknown {
  if (values.length === 0 || values[0] === undefined || values[0] === null) return custom ? null : zeroValue(column)
  if (column.type === 'date' && column.printer === undefined) {
    const t = typeof values[0] === 'string' ? Date.parse(values[0]) : NaN
    if (Number.isNaN(t)) return custom ? null : '<unknown>'
    return humanDuration(now - t)
  }
  if (values.length === 1) {
    const v = values[0]
    if (column.type === 'string' && v !== null && typeof v === 'object') return JSON.stringify(v)
    return v
  }
  return values.map(v => (typeof v === 'object' ? JSON.stringify(v) : String(v))).join(',')
}

/** What a Go printer shows for an unset field of a built-in kind. */
function zeroValue (column: PrinterColumn): unknown {
  if (column.type === 'integer' || column.type === 'number') return 0
  if (column.type === 'date') return '<unknown>'
  if (column.type === 'boolean') return false
  return ''
}

/**
 * A Table document; rows carry the object as PartialObjectMetadata (includeObject=Metadata, the default), whole
 * (Object, what `kubectl get --sort-by` asks for) or not at all (None).
 */
export function buildTable (conv: TableConvertor, metaGroup: string, objects: Array<Record<string, unknown>>, listMeta: TableListMeta,
  include: IncludeObject = 'Metadata'): Record<string, unknown> {
  const metadata: Record<string, unknown> = {}
  if (listMeta.resourceVersion !== undefined) metadata.resourceVersion = listMeta.resourceVersion
  if (listMeta.continue) metadata.continue = listMeta.continue
  if (listMeta.remainingItemCount !== undefined) metadata.remainingItemCount = listMeta.remainingItemCount
  return {
    kind: 'Table',
    apiVersion: `${metaGroup}/v1`,
    metadata,
    columnDefinitions: conv.columns,
    rows: objects.map(o => {
      const r = conv.row(o)
      if (include === 'None') return { cells: r.cells }
      return { cells: r.cells, object: include === 'Object' ? o : partialObjectMetadata(metaGroup, r.object) }
    })
  }
}

export function partialObjectMetadata (metaGroup: string, metadata: Record<string, unknown>): Record<string, unknown> {
  return { kind: 'PartialObjectMetadata', apiVersion: `${metaGroup}/v1`, metadata }
}
