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
  const body = await readRawArchive(context.store, table.name, context.run.exportDate, table.format)
  if (body === undefined) {
    throw new DataError('RAW_ARCHIVE_MISSING', {
      tableId: table.id,
      reason: `there is no raw archive ${rawArchiveKey(table.name, context.run.exportDate, table.format)} to rebuild from`,
      hint: 'set "archiveRaw": true on the table so future exports keep their CSV or workbook',
    })
  }
  const key = rawArchiveKey(table.name, context.run.exportDate, table.format)
  return landTable(
    table,
    {
      httpStatus: 200,
      attempts: 0,
      body: failingAsCorrupt(body, table.id, key),
      cancel: () => undefined,
      archive: false,
    },
    context,
    probe,
  )
}

/** zlib's failures (codes `Z_*`) mean the archive itself is damaged: say so, and what to do, as a coded error. */
async function* failingAsCorrupt(body: AsyncIterable<Buffer>, tableId: string, key: string): AsyncGenerator<Buffer> {
  try {
    yield* body
  } catch (error) {
    const code = (error as { code?: unknown }).code
    if (typeof code !== 'string' || !code.startsWith('Z_')) throw error
    throw new DataError('RAW_ARCHIVE_CORRUPT', {
      tableId,
      reason: `the raw archive ${key} is damaged (${(error as Error).message})`,
      hint: 'the data for the date is kept as it was; restore the archive (e.g. from S3 versioning) and run reprocess again',
      cause: error,
    })
  }
}
