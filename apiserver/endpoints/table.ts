// The Table view (spec 2.5): column definitions from the kind's printer columns, one row per object.

import type { PrinterColumn, ResourceDefinition } from '../schema/types.js'
import { compileJsonPath } from './jsonpath.js'
import { COLUMN_PRINTERS } from './printers.js'

export interface TableColumn { name: string; type: string; format: string; description: string; priority: number }

export interface TableListMeta { resourceVersion?: string; continue?: string; remainingItemCount?: number }

/** Converts objects of one kind to Table rows; built once per definition and reused. */
export interface TableConvertor {
  columns: TableColumn[]
  row(object: Record<string, unknown>): { cells: unknown[]; object: Record<string, unknown> }
}

const NAME_COLUMN: TableColumn = {
  name: 'Name', type: 'string', format: 'name', priority: 0,
  description: 'Name must be unique within a namespace. Cannot be updated.'
}
const CREATED_AT_COLUMN: TableColumn = {
  name: 'Created At', type: 'date', format: '', priority: 0,
  description: 'CreationTimestamp is a timestamp representing the server time when this object was created.'
}

const AGE_COLUMN: PrinterColumn = {
  name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp',
  description: 'CreationTimestamp is a timestamp representing the server time when this object was created.'
}

/**
 * Columns: Name, then the definition's printer columns. A kind without printer columns gets the
 * default pair Name + Created At (spec 2.5). Built-in kinds with columns get a trailing Age as
 * Kubernetes' own printers have; a CRD's columns are taken as declared (it lists Age itself).
 * `now` is injected so ages are testable.
 */
export function createTableConvertor (def: ResourceDefinition, now: () => number): TableConvertor {
  const declared = def.printerColumns
  const withAge = declared.length > 0 && def.custom === undefined && !declared.some(c => c.name === 'Age')
    ? [...declared, AGE_COLUMN]
    : declared
  const printer = withAge.map(c => {
    const computed = c.printer === undefined ? undefined : COLUMN_PRINTERS[c.printer]
    return { column: c, eval: computed !== undefined ? (o: unknown) => [computed(o as Record<string, unknown>)] : safeCompile(c.jsonPath) }
  })
  const columns: TableColumn[] = [NAME_COLUMN]
  if (printer.length === 0) columns.push(CREATED_AT_COLUMN)
  for (const { column } of printer) {
    columns.push({
      // Ages are served as text ("5m"), so a date column is declared as string, as Kubernetes does.
      name: column.name, type: column.type === 'date' ? 'string' : column.type, format: column.format ?? '',
      description: column.description ?? '', priority: column.priority ?? 0
    })
  }
  return {
    columns,
    row (object) {
      const meta = (object.metadata ?? {}) as Record<string, unknown>
      const cells: unknown[] = [meta.name ?? '']
      if (printer.length === 0) cells.push(meta.creationTimestamp ?? null)
      for (const p of printer) cells.push(cell(p.column, p.eval(object), now))
      return { cells, object: meta }
    }
  }
}

function safeCompile (path: string): (root: unknown) => unknown[] {
  try { return compileJsonPath(path) } catch { return () => [] }
}

function cell (column: PrinterColumn, values: unknown[], now: () => number): unknown {
  if (values.length === 0) return null
  if (column.type === 'date') {
    const t = typeof values[0] === 'string' ? Date.parse(values[0]) : NaN
    return Number.isNaN(t) ? null : humanDuration(now() - t)
  }
  if (values.length === 1) {
    const v = values[0]
    if (column.type === 'string' && v !== null && typeof v === 'object') return JSON.stringify(v)
    return v
  }
  return values.map(v => (typeof v === 'object' ? JSON.stringify(v) : String(v))).join(',')
}

/** Kubernetes' HumanDuration (`45s`, `3m20s`, `5h`, `2d3h`, ...). */
export function humanDuration (ms: number): string {
  const s = Math.floor(ms / 1000)
  if (s < -1) return '<invalid>'
  if (s < 0) return '0s'
  if (s < 120) return `${s}s`
  const m = Math.floor(s / 60)
  if (m < 10) return s % 60 === 0 ? `${m}m` : `${m}m${s % 60}s`
  if (m < 180) return `${m}m`
  const h = Math.floor(m / 60)
  if (h < 8) return m % 60 === 0 ? `${h}h` : `${h}h${m % 60}m`
  if (h < 48) return `${h}h`
  const d = Math.floor(h / 24)
  if (h < 24 * 8) return h % 24 === 0 ? `${d}d` : `${d}d${h % 24}h`
  if (d < 365 * 2) return `${d}d`
  const y = Math.floor(d / 365)
  if (d < 365 * 8) return d % 365 === 0 ? `${y}y` : `${y}y${d % 365}d`
  return `${y}y`
}

/** A Table document; rows carry the object as PartialObjectMetadata (includeObject=Metadata, the default). */
export function buildTable (conv: TableConvertor, metaGroup: string, objects: Array<Record<string, unknown>>, listMeta: TableListMeta): Record<string, unknown> {
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
      return { cells: r.cells, object: partialObjectMetadata(metaGroup, r.object) }
    })
  }
}

export function partialObjectMetadata (metaGroup: string, metadata: Record<string, unknown>): Record<string, unknown> {
  return { kind: 'PartialObjectMetadata', apiVersion: `${metaGroup}/v1`, metadata }
}
