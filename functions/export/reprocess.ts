/** Rebuilds a table's Parquet for a date from its raw archive, through the same path as a download. */
import type { TableConfig } from './config.ts'
import { DataError } from './errors.ts'
import { rawArchiveKey, readRawArchive } from './raw-archive.ts'
import { landTable, type TableExportContext, type TableExportProbe, type TableExportResult } from './table-export.ts'

export const reprocessTable = async (
  table: TableConfig,
  context: TableExportContext,
  probe: TableExportProbe,
): Promise<TableExportResult> => {
  const body = await readRawArchive(context.store, table.name, context.run.exportDate)
  if (body === undefined) {
    throw new DataError('RAW_ARCHIVE_MISSING', {
      tableId: table.id,
      reason: `there is no raw archive ${rawArchiveKey(table.name, context.run.exportDate)} to rebuild from`,
      hint: 'set "archiveRaw": true on the table so future exports keep their CSV',
    })
  }
  return landTable(
    table,
    { httpStatus: 200, attempts: 0, body, cancel: () => undefined, archive: false },
    context,
    probe,
  )
}
