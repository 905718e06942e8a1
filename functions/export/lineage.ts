/** Lineage columns: appended after the data columns of every table, so every row says where it came from. */
import { ColumnType, LineageColumn } from './constants.ts'
import type { SpooledRowGroup } from './normalize/spool.ts'
import type { ColumnValues } from './parquet/encode.ts'
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
]

export const LINEAGE_COLUMN_NAMES: readonly string[] = LINEAGE_COLUMNS.map((c) => c.name)

/** The lineage columns' values for one row group, in LINEAGE_COLUMNS order. */
export const lineageValues = (group: SpooledRowGroup, sourceTableId: string, run: RunIdentity): ColumnValues[] => {
  const { rowCount, firstRow } = group
  const rowNumbers: ColumnValues = new Array(rowCount)
  for (let i = 0; i < rowCount; i++) rowNumbers[i] = BigInt(firstRow + i)
  return [
    new Array(rowCount).fill(run.runId),
    new Array(rowCount).fill(run.exportedAt.getTime()),
    new Array(rowCount).fill(sourceTableId),
    rowNumbers,
  ]
}
