/**
 * The path's "name and type" step, shared by the export and `check`: the header becomes column names, the
 * table's column controls apply (dropped and raw personal columns go no further), and a type inferrer is made
 * ready to learn what each column's values fit. It learns as the batches go by (`types.observe(batch)`, one pass
 * over each batch's cells), so the types are known once the batches end, with no second read.
 */
import type { TableConfig } from '../core/config.ts'
import type { ColumnType } from '../core/constants.ts'
import { RESERVED_COLUMN_NAMES } from '../core/lineage.ts'
import type { PseudonymizationKey } from '../core/pseudonymization-key.ts'
import { type NamedColumn, nameColumns } from '../normalize/columns.ts'
import { controlColumns, controlRecords } from '../normalize/personal-data.ts'
import type { TableRecords } from '../normalize/table-records.ts'
import { ColumnTypeInferrer } from '../normalize/types.ts'

export interface NamedTable {
  /** The written columns, named and controlled, in the export's order. */
  readonly columns: readonly NamedColumn[]
  /** `columnTypes`, with `string` for every pseudonymized column. */
  readonly forced: Readonly<Record<string, ColumnType>>
  /** The records with the controls applied: these, never the read's own, go to every later stage. */
  readonly records: TableRecords
  /** What each column's values fit so far; fed by the caller with every batch before anything else sees it. */
  readonly types: ColumnTypeInferrer
}

/**
 * Names the columns over the whole header (so the names do not depend on what is dropped), then controls them.
 * `key` may be absent only when nothing is pseudonymized, or for a preview (see controlRecords).
 */
export const nameAndType = (
  table: TableConfig,
  records: TableRecords,
  key: PseudonymizationKey | undefined,
  options: { readonly forPreview?: boolean } = {},
): NamedTable => {
  const controlled = controlColumns(
    table.id,
    table.columns,
    nameColumns(records.header, RESERVED_COLUMN_NAMES),
    table.columnTypes,
  )
  const columns = controlled.columns
  return {
    columns,
    forced: controlled.forced,
    records: controlRecords(records, controlled, key, options),
    types: new ColumnTypeInferrer({
      tableId: table.id,
      columnNames: columns.map((c) => c.name),
      forced: controlled.forced,
    }),
  }
}
