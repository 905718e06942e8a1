/**
 * The schema registry's document: one per table, beside the data (`_schemas/<name>.json`). It is the source of
 * truth for what is written and for the catalog. Once a column's type is published it never changes: a value that
 * no longer fits is written as NULL in the typed column and kept, as text, in `<column>__text`. Columns are only
 * ever appended; a column that disappears from the CSV stays, NULL from then on.
 */
import type { ColumnType } from '../core/constants.ts'
import { fitIdentifier } from '../core/identifier.ts'

/** Suffix of the companion text column that keeps values that no longer fit a column's published type. */
const TEXT_COMPANION_SUFFIX = '__text'
export const SCHEMA_DOCUMENT_VERSION = 1

/**
 * The companion of `column`: `<column>__text`, or, when that would pass 255 characters, the column's first
 * characters, `_`, 8 hex digits of the SHA-256 of the whole name, and `__text`. Deterministic, and unique: data
 * column names never contain `__`, and two long names sharing their first 240 characters differ in the hash.
 */
export const companionName = (column: string): string => fitIdentifier(column, TEXT_COMPANION_SUFFIX)

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
  /** The layout the dates are in when it is Iceberg's (path/layout-of.ts); absent: the Hive layout. */
  readonly tableFormat?: 'iceberg'
  /** `tables[].key` as of the last export: the columns `<table>_changes` matches rows by. */
  readonly key?: readonly string[]
  /**
   * `tables[].columns.pseudonymize` as of the last export: the columns published as pseudonyms, so a column added
   * to it later is known to be in clear on the dates already written. Absent from registries written before it was
   * recorded: then the configured list is taken as the one the dates were written with.
   */
  readonly pseudonymized?: readonly string[]
  /**
   * The columns dropped as personal data (they have no column here): kept, as `pseudonymized` is, until the
   * operator names one in `columns.publishInClear`, so that one taken out of `columns.drop` is refused meanwhile.
   */
  readonly dropped?: readonly string[]
  /**
   * Read only, from registries written before the dates relation (schema/export-dates.ts): the dates published
   * then. The next export of the table moves them to the relation and writes the registry without them.
   */
  readonly exportDates?: readonly string[]
  /** Absent before the first export that recorded it (then no guard compares). */
  readonly latestExport?: ExportBaseline
}

/** ISO dates compare as text; `undefined` is "none yet". */
export const minDate = (a: string | undefined, b: string): string => (a === undefined || b < a ? b : a)
export const maxDate = (a: string | undefined, b: string): string => (a === undefined || b > a ? b : a)
