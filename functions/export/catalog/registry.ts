/**
 * The schema registry: one JSON document per table, beside the data (`_schemas/<name>.json`). It is the source
 * of truth for what is written and for the catalog. Once a column's type is published it never changes: a
 * value that no longer fits is written as NULL in the typed column and kept, as text, in `<column>__text`.
 * Columns are only ever appended; a column that disappears from the CSV stays, NULL from then on.
 */
import { createHash } from 'node:crypto'
import { type ColumnType, MAX_COLUMN_NAME_LENGTH, SCHEMAS_FOLDER, ColumnType as Types } from '../constants.ts'
import { WriteConflictError } from '../errors.ts'
import type { NamedColumn } from '../normalize/columns.ts'
import type { WarehouseStore } from '../publish/store.ts'

/** Suffix of the companion text column that keeps values that no longer fit a column's published type. */
export const TEXT_COMPANION_SUFFIX = '__text'
export const SCHEMA_DOCUMENT_VERSION = 1

/**
 * The companion of `column`: `<column>__text`, or, when that would pass 255 characters, the column's first
 * characters, `_`, 8 hex digits of the SHA-256 of the whole name, and `__text`. Deterministic, and unique: data
 * column names never contain `__`, and two long names sharing their first 240 characters differ in the hash.
 */
export const companionName = (column: string): string => {
  const name = `${column}${TEXT_COMPANION_SUFFIX}`
  if (name.length <= MAX_COLUMN_NAME_LENGTH) return name
  const hash = createHash('sha256').update(column).digest('hex').slice(0, 8)
  const keep = MAX_COLUMN_NAME_LENGTH - TEXT_COMPANION_SUFFIX.length - hash.length - 1
  return `${column.slice(0, keep).replace(/_+$/, '')}_${hash}${TEXT_COMPANION_SUFFIX}`
}

export interface RegisteredColumn {
  readonly name: string
  /** Latest header text the service sent for it; companions have none. */
  readonly header?: string
  readonly type: ColumnType
  /** For a companion text column: the typed column whose misfits it holds. */
  readonly textOf?: string
  readonly firstSeen: string
  readonly lastSeen: string
}

/** The table's latest published export, as the upstream change guards compare with it. */
export interface ExportBaseline {
  readonly exportDate: string
  readonly runId: string
  readonly rows: number
  /** Exported names of the CSV's columns, with the header text they came from. */
  readonly columns: readonly { readonly name: string; readonly header: string }[]
}

export interface TableSchema {
  readonly version: typeof SCHEMA_DOCUMENT_VERSION
  readonly table: string
  readonly sourceTableId: string
  readonly firstExportDate: string
  readonly lastExportDate: string
  readonly columns: readonly RegisteredColumn[]
  /** `tables[].key` as of the last export: the columns `<table>_changes` matches rows by. */
  readonly key?: readonly string[]
  /** Export dates published since the registry began to keep them: the dates `<table>_changes` compares. */
  readonly exportDates?: readonly string[]
  /** Absent before the first export that recorded it (then no guard compares). */
  readonly latestExport?: ExportBaseline
}

/** Where a column of the file being written takes its values from. */
export type ColumnSource =
  | { readonly kind: 'csv'; readonly index: number; readonly type: ColumnType; readonly companion?: number }
  | { readonly kind: 'companion'; readonly of: number }
  | { readonly kind: 'absent' }

export interface WritePlan {
  /** The registry after this export. */
  readonly schema: TableSchema
  /** One entry per registry column, in registry order. */
  readonly sources: readonly ColumnSource[]
  /** Whether names, types or headers changed (what the catalog cares about; dates do not count). */
  readonly shapeChanged: boolean
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

export const schemaKey = (table: string): string => `${SCHEMAS_FOLDER}/${table}.json`

export const readTableSchema = async (store: WarehouseStore, table: string): Promise<TableSchema | undefined> => {
  const bytes = await store.getObject(schemaKey(table))
  return bytes === undefined ? undefined : (JSON.parse(bytes.toString('utf8')) as TableSchema)
}

export const writeTableSchema = (store: WarehouseStore, schema: TableSchema): Promise<string> =>
  store.putObject(schemaKey(schema.table), `${JSON.stringify(schema, null, 2)}\n`, 'application/json')

/** Conditional writes lost in a row before giving up: each loss means another run's change was merged in. */
const MAX_REGISTER_ATTEMPTS = 8

/**
 * Registers this export's schema without losing another run's: read the registry with its version, merge, tell
 * the catalog, and write only if nobody wrote in between; else read again. Returns the schema as registered.
 */
export const registerTableSchema = async (
  store: WarehouseStore,
  mine: TableSchema,
  publish?: (schema: TableSchema) => Promise<void>,
): Promise<TableSchema> => {
  const key = schemaKey(mine.table)
  for (let attempt = 1; ; attempt++) {
    const current = await store.getObjectVersion(key)
    const registered = current === undefined ? undefined : (JSON.parse(current.body.toString('utf8')) as TableSchema)
    const merged = mergeSchemas(registered, mine)
    if (publish) await publish(merged)
    try {
      await store.putObjectIfVersion(key, `${JSON.stringify(merged, null, 2)}\n`, 'application/json', current?.version)
      return merged
    } catch (error) {
      if (!(error instanceof WriteConflictError) || attempt >= MAX_REGISTER_ATTEMPTS) throw error
    }
  }
}

/**
 * The registry as it stands plus this export's view: columns are only ever appended, so the union keeps both
 * runs' new columns; a column both know keeps the registered type (published first) and the widest dates.
 */
export const mergeSchemas = (registered: TableSchema | undefined, mine: TableSchema): TableSchema => {
  if (registered === undefined) return mine
  const { key: _registeredKey, ...base } = registered
  const columns = [...registered.columns]
  const position = new Map(columns.map((c, i) => [c.name, i]))
  for (const column of mine.columns) {
    const at = position.get(column.name)
    if (at === undefined) {
      position.set(column.name, columns.length)
      columns.push(column)
      continue
    }
    const known = columns[at]!
    const newer = column.lastSeen >= known.lastSeen
    columns[at] = {
      ...known,
      ...(newer && column.header !== undefined ? { header: column.header } : {}),
      firstSeen: minDate(known.firstSeen, column.firstSeen),
      lastSeen: maxDate(known.lastSeen, column.lastSeen),
    }
  }
  return {
    ...base,
    sourceTableId: mine.sourceTableId,
    firstExportDate: minDate(registered.firstExportDate, mine.firstExportDate),
    lastExportDate: maxDate(registered.lastExportDate, mine.lastExportDate),
    columns,
    ...latestOf(registered.latestExport, mine.latestExport),
    // Both runs' dates, so `<table>_changes` compares every published date; the key is this run's configuration.
    ...(registered.exportDates || mine.exportDates
      ? { exportDates: [...new Set([...(registered.exportDates ?? []), ...(mine.exportDates ?? [])])].sort() }
      : {}),
    ...(mine.key === undefined ? {} : { key: mine.key }),
  }
}

/** The guards compare with the newest published export, whichever run registered it (a backfill never wins). */
const latestOf = (registered?: ExportBaseline, mine?: ExportBaseline): { latestExport?: ExportBaseline } => {
  if (mine === undefined) return registered === undefined ? {} : { latestExport: registered }
  return { latestExport: registered !== undefined && registered.exportDate > mine.exportDate ? registered : mine }
}

/** Decides the file's columns from the previous schema and this export, and the schema after it. */
export const planWrite = (previous: TableSchema | undefined, current: CurrentExport): WritePlan => {
  const { exportDate } = current
  const columns: RegisteredColumn[] = previous ? [...previous.columns] : []
  const indexOf = new Map(columns.map((c, i) => [c.name, i]))
  const csvIndexOf = new Map(current.columns.map((c, i) => [c.name, i]))
  let shapeChanged = previous === undefined

  const touch = (position: number, changes: Partial<RegisteredColumn>) => {
    const before = columns[position]!
    if (changes.header !== undefined && changes.header !== before.header) shapeChanged = true
    columns[position] = {
      ...before,
      ...changes,
      firstSeen: minDate(before.firstSeen, exportDate),
      lastSeen: maxDate(before.lastSeen, exportDate),
    }
  }
  const append = (column: Omit<RegisteredColumn, 'firstSeen' | 'lastSeen'>): number => {
    columns.push({ ...column, firstSeen: exportDate, lastSeen: exportDate })
    indexOf.set(column.name, columns.length - 1)
    shapeChanged = true
    return columns.length - 1
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
    shapeChanged,
  }
}

const minDate = (a: string | undefined, b: string): string => (a === undefined || b < a ? b : a)
const maxDate = (a: string | undefined, b: string): string => (a === undefined || b > a ? b : a)
