/**
 * The path's "name and type" step, shared by the export, reprocess and `check`: the header becomes column names
 * (by header text where the registry knows the table, normalize/column-identity.ts), the table's column controls
 * apply (dropped and raw personal columns go no further), and a type inferrer is made ready to learn what each
 * column's values fit. It learns as the batches go by (`types.observe(batch)`, one pass over each batch's cells),
 * so the types are known once the batches end, with no second read.
 */
import type { TableConfig } from '../core/config.ts'
import type { ColumnType } from '../core/constants.ts'
import { ColumnControlRemovedError, HistoryRewriteNeededError } from '../core/errors.ts'
import { RESERVED_COLUMN_NAMES } from '../core/lineage.ts'
import type { PseudonymizationKey } from '../core/pseudonymization-key.ts'
import {
  type AmbiguousHeader,
  ambiguousHeaders,
  type KnownColumns,
  nameKnownColumns,
} from '../normalize/column-identity.ts'
import type { NamedColumn } from '../normalize/columns.ts'
import { controlColumns, controlRecords } from '../normalize/personal-data.ts'
import type { TableRecords } from '../normalize/table-records.ts'
import { ColumnTypeInferrer } from '../normalize/types.ts'
import { publishedColumnChanges, removedControls } from '../schema/history.ts'
import type { TableSchema } from '../schema/table-schema.ts'

export interface NamedTable {
  /** The written columns, named and controlled, in the export's order. */
  readonly columns: readonly NamedColumn[]
  /** `columnTypes`, with `string` for every pseudonymized column. */
  readonly forced: Readonly<Record<string, ColumnType>>
  /** The records with the controls applied: these, never the read's own, go to every later stage. */
  readonly records: TableRecords
  /** What each column's values fit so far; fed by the caller with every batch before anything else sees it. */
  readonly types: ColumnTypeInferrer
  /** Identical header texts whose columns cannot be matched to the published ones (the guards hold the export). */
  readonly ambiguousHeaders: readonly AmbiguousHeader[]
}

/**
 * Names the columns over the whole header (so the names do not depend on what is dropped), then controls them.
 * `previous` is the table's registry, without the dropped columns (absent on a first export, and for `check`,
 * which names as a first export does). `key` may be absent only when nothing is pseudonymized, or for a preview
 * (see controlRecords).
 */
export const nameAndType = (
  table: TableConfig,
  records: TableRecords,
  key: PseudonymizationKey | undefined,
  options: { readonly previous?: TableSchema | undefined; readonly forPreview?: boolean } = {},
): NamedTable => {
  const { previous, forPreview } = options
  const known = previous && knownColumns(previous)
  const named = nameKnownColumns(records.header, RESERVED_COLUMN_NAMES, known)
  const controlled = controlColumns(table.id, table.columns, named, table.columnTypes)
  const columns = controlled.columns
  return {
    columns,
    forced: controlled.forced,
    records: controlRecords(records, controlled, key, { forPreview: forPreview ?? false }),
    types: new ColumnTypeInferrer({
      tableId: table.id,
      columnNames: columns.map((c) => c.name),
      forced: controlled.forced,
    }),
    ambiguousHeaders: ambiguousHeaders(named, known, table.columns.drop),
  }
}

const knownColumns = (schema: TableSchema): KnownColumns => ({
  registered: schema.columns.filter((c) => c.textOf === undefined),
  latest: schema.latestExport?.columns,
})

/**
 * A setting that changes a published column (its type, a drop, a pseudonym) would apply to new dates only: the
 * table is refused, with `npm run rewrite` as the next step, before anything is read or written.
 */
export const refuseHistoryChanges = (table: TableConfig, registered: TableSchema | undefined): void => {
  const changes = registered === undefined ? [] : publishedColumnChanges(table, registered)
  if (changes.length > 0) throw new HistoryRewriteNeededError({ tableId: table.id, tableName: table.name, changes })
}

/**
 * A column the registry records as dropped or pseudonymized that this date would write in clear (taken out of
 * `columns.drop` or `columns.pseudonymize`, by mistake or not): refused, naming it, until the operator accepts it
 * in `columns.publishInClear`; the dates already published keep it hashed or without it whatever is decided.
 */
export const refuseRemovedControls = (
  table: TableConfig,
  registered: TableSchema | undefined,
  written: readonly NamedColumn[],
  readBackPseudonyms: readonly string[] | undefined,
): void => {
  const names = written.map((c) => c.name)
  const removed = removedControls(table, registered, names, readBackPseudonyms)
  if (removed.length > 0) throw new ColumnControlRemovedError({ tableId: table.id, tableName: table.name, removed })
}
