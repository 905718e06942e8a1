/**
 * The write plan: which columns the file has and where each takes its values from, decided from the registry's
 * schema before this export and what this export's values fit. Pure: `registry.ts` reads and writes the schema.
 */
import { type ColumnType, ColumnType as Types } from '../core/constants.ts'
import type { NamedColumn } from '../normalize/columns.ts'
import {
  companionName,
  maxDate,
  minDate,
  type RegisteredColumn,
  SCHEMA_DOCUMENT_VERSION,
  type TableSchema,
} from './table-schema.ts'

/** Where a column of the file being written takes its values from. */
type ColumnSource =
  | { readonly kind: 'csv'; readonly index: number; readonly type: ColumnType; readonly companion?: number }
  | { readonly kind: 'companion'; readonly of: number }
  | { readonly kind: 'absent' }

export interface WritePlan {
  /** The registry after this export. */
  readonly schema: TableSchema
  /** One entry per registry column, in registry order. */
  readonly sources: readonly ColumnSource[]
}

export interface CurrentExport {
  readonly table: string
  readonly sourceTableId: string
  readonly exportDate: string
  readonly columns: readonly NamedColumn[]
  /** Type inferred over this export's values, per CSV column. */
  readonly inferred: readonly ColumnType[]
  /** Whether every value of CSV column `index` fits `type` (so an older, wider type can be kept). */
  readonly fits: (index: number, type: ColumnType) => boolean
}

/** Decides the file's columns from the previous schema and this export, and the schema after it. */
export const planWrite = (previous: TableSchema | undefined, current: CurrentExport): WritePlan => {
  const { exportDate } = current
  const columns: RegisteredColumn[] = previous ? [...previous.columns] : []
  const indexOf = new Map(columns.map((c, i) => [c.name, i]))
  const csvIndexOf = new Map(current.columns.map((c, i) => [c.name, i]))

  const touch = (position: number, changes: Partial<RegisteredColumn>) => {
    const before = columns[position]!
    columns[position] = {
      ...before,
      ...changes,
      firstSeen: minDate(before.firstSeen, exportDate),
      lastSeen: maxDate(before.lastSeen, exportDate),
    }
  }
  const append = (column: Omit<RegisteredColumn, 'firstSeen' | 'lastSeen'>) => {
    columns.push({ ...column, firstSeen: exportDate, lastSeen: exportDate })
    indexOf.set(column.name, columns.length - 1)
  }

  current.columns.forEach((column, csvIndex) => {
    const position = indexOf.get(column.name)
    if (position === undefined || columns[position]!.textOf !== undefined) {
      append({ name: column.name, header: column.header, type: current.inferred[csvIndex]! })
      return
    }
    touch(position, { header: column.header })
    const published = columns[position]!.type
    if (published !== Types.STRING && !current.fits(csvIndex, published)) {
      const companion = indexOf.get(companionName(column.name))
      if (companion === undefined) append({ name: companionName(column.name), type: Types.STRING, textOf: column.name })
      else touch(companion, {})
    }
  })

  const sources: ColumnSource[] = columns.map((column) => {
    const csvIndex = column.textOf === undefined ? csvIndexOf.get(column.name) : undefined
    if (csvIndex !== undefined) {
      const companionPosition = indexOf.get(companionName(column.name))
      const needsCompanion = column.type !== Types.STRING && !current.fits(csvIndex, column.type)
      return needsCompanion && companionPosition !== undefined
        ? { kind: 'csv', index: csvIndex, type: column.type, companion: companionPosition }
        : { kind: 'csv', index: csvIndex, type: column.type }
    }
    if (column.textOf !== undefined) {
      const of = csvIndexOf.get(column.textOf)
      const ofColumn = columns[indexOf.get(column.textOf)!]!
      if (of !== undefined && !current.fits(of, ofColumn.type)) return { kind: 'companion', of }
    }
    return { kind: 'absent' }
  })

  return {
    schema: {
      version: SCHEMA_DOCUMENT_VERSION,
      table: current.table,
      sourceTableId: current.sourceTableId,
      firstExportDate: minDate(previous?.firstExportDate, exportDate),
      lastExportDate: maxDate(previous?.lastExportDate, exportDate),
      columns,
    },
    sources,
  }
}

/**
 * Whether two plans write the same file: the same columns, names and types, each from the same source. Headers
 * and dates only change the registry, never a byte of the file.
 */
export const sameFileLayout = (a: WritePlan, b: WritePlan): boolean =>
  a.sources.length === b.sources.length &&
  a.schema.columns.length === b.schema.columns.length &&
  a.schema.columns.every((column, i) => {
    const other = b.schema.columns[i]!
    return column.name === other.name && column.type === other.type
  }) &&
  a.sources.every((source, i) => sameSource(source, b.sources[i]!))

const sameSource = (a: ColumnSource, b: ColumnSource): boolean => {
  if (a.kind === 'csv' && b.kind === 'csv') {
    return a.index === b.index && a.type === b.type && a.companion === b.companion
  }
  if (a.kind === 'companion' && b.kind === 'companion') return a.of === b.of
  return a.kind === b.kind
}
