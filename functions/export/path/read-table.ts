/**
 * The read stage, by the table's format: the CSV parser or the workbook reader, each on a thread of its own when
 * the edge grants one. Both hand over the same header and record batches (TableRecords); what differs is what the run record
 * says about the body, whichever TableSource (source/table-source.ts) the bytes came from.
 */
import type { TableConfig } from '../core/config.ts'
import type { TableFormatName } from '../core/constants.ts'
import { openParsedTable, type ParseThread } from '../csv/parse-worker.ts'
import type { RecordLimits } from '../csv/record-guard.ts'
import type { TableRecords } from '../normalize/table-records.ts'
import { openWorkbookTable } from '../xlsx/reader.ts'

interface ReadDetails {
  readonly format: TableFormatName
  /** The CSV's encoding as used; a workbook's XML is always UTF-8. */
  readonly encoding: string
  /** The CSV's delimiter; absent for a workbook. */
  readonly delimiter?: string
  /** The worksheet read; absent for a CSV. */
  readonly sheet?: string
  readonly warnings: readonly string[]
}

interface TableRead {
  readonly records: TableRecords
  /** Known once the batches have ended. */
  details(): ReadDetails
}

interface ReadContext {
  readonly spoolDirectory: string
  /** `inline` for a preview, too short for a parse thread to pay. @default 'auto' */
  readonly parseThread?: ParseThread | undefined
  /** Threads parsing may use (core/parse-threads.ts); default: as many as this process's cores pay for. */
  readonly parseThreads?: number | undefined
  /** How wide and long a record may be, for both formats. */
  readonly limits: RecordLimits
  /** The table's deadline: the download stops with it, and so does reading a spooled workbook. */
  readonly signal?: AbortSignal | undefined
  /** The charset the source declared (source/table-source.ts); a CSV without a BOM or table encoding is read in it. */
  readonly charset?: string | undefined
}

export const openTableRead = async (
  table: TableConfig,
  body: AsyncIterable<Buffer>,
  context: ReadContext,
): Promise<TableRead> => {
  if (table.format === 'xlsx') {
    const { spoolDirectory, limits, signal, parseThread: thread, parseThreads: threads } = context
    const workbook = await openWorkbookTable(body, {
      tableId: table.id,
      sheet: table.sheet,
      spoolDirectory,
      limits,
      signal,
      thread,
      threads,
    })
    return {
      records: workbook,
      details: () => ({ format: 'xlsx', encoding: 'utf-8', sheet: workbook.sheetName, warnings: workbook.warnings() }),
    }
  }
  const { delimiter, shortRows, encoding, invalidBytes } = table
  const { charset, limits } = context
  const options = { tableId: table.id, delimiter, shortRows, encoding, charset, invalidBytes, limits }
  const parsed = await openParsedTable(body, options, context.parseThread, context.parseThreads)
  return {
    records: parsed,
    details: () => ({
      format: 'csv',
      encoding: parsed.report.encoding,
      delimiter: parsed.delimiter,
      warnings: parsed.warnings,
    }),
  }
}
