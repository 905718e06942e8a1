/**
 * Lineage columns: appended after the data columns of every table, so every row says where it came from. Their
 * values are made by the encoder (`parquet/lineage-values.ts`).
 */
import { ColumnType, LineageColumn, PARTITION_KEY } from './constants.ts'
import type { ColumnRecord } from './run-record.ts'

export interface RunIdentity {
  readonly runId: string
  readonly exportDate: string
  readonly exportedAt: Date
}

export const LINEAGE_COLUMNS: readonly ColumnRecord[] = [
  { name: LineageColumn.RUN_ID, type: ColumnType.STRING },
  { name: LineageColumn.EXPORTED_AT, type: ColumnType.TIMESTAMP },
  { name: LineageColumn.SOURCE_TABLE_ID, type: ColumnType.STRING },
  { name: LineageColumn.ROW_NUMBER, type: ColumnType.BIGINT },
  { name: LineageColumn.ROW_FINGERPRINT, type: ColumnType.BIGINT },
]

export const LINEAGE_COLUMN_NAMES: readonly string[] = LINEAGE_COLUMNS.map((c) => c.name)

/**
 * Whether a run record's column is one of the lineage columns every export appends; every other column, a
 * `__text` companion included, is a data column (the summary and `npm run check` count them so).
 */
export const isLineageColumn = (column: { readonly name: string }): boolean =>
  LINEAGE_COLUMN_NAMES.includes(column.name)

/** Names no data column may take: the lineage columns and the partition column (`DT` becomes `dt_2`). */
export const RESERVED_COLUMN_NAMES: readonly string[] = [...LINEAGE_COLUMN_NAMES, PARTITION_KEY]
