/** The CSV and XLSX answers for a table the caller may read. */
import { createReadStream, readFileSync, statSync } from 'node:fs'
import { csvChunks } from './csv.ts'
import { parseRawCsv } from './raw-csv.ts'
import { bytesBody, type Exchange, reply } from './reply.ts'
import type { ExportFormat } from './routes.ts'
import { isCsvFileTable, isRawCsvTable, type Row, type SavedTable } from './tables.ts'
import { XLSX_CONTENT_TYPE, xlsxChunks } from './xlsx.ts'

export const CSV_CONTENT_TYPE = 'text/csv; charset=utf-8'

/** Table ids come from tests too; keep the header value plain ASCII without quotes. */
const attachment = (tableId: string, format: ExportFormat): string =>
  `attachment; filename="${tableId.replace(/[^\w.-]/g, '_')}.${format}"`

function* withHeader(columns: Row, rows: Iterable<Row>): Generator<Row> {
  yield columns
  yield* rows
}

const replyCsv = (exchange: Exchange, table: SavedTable): Promise<void> => {
  const disposition = attachment(table.id, 'csv')
  if (isRawCsvTable(table)) {
    const bytes = typeof table.rawCsv === 'string' ? Buffer.from(table.rawCsv, 'utf8') : table.rawCsv
    const headers = { 'Content-Type': table.contentType ?? CSV_CONTENT_TYPE, 'Content-Disposition': disposition }
    return reply(exchange, 200, headers, bytesBody(bytes))
  }
  if (isCsvFileTable(table)) {
    const headers = { 'Content-Type': table.contentType ?? CSV_CONTENT_TYPE, 'Content-Disposition': disposition }
    const file = table.csvFile
    return reply(exchange, 200, headers, {
      length: statSync(file).size,
      chunks: () => createReadStream(file, { highWaterMark: 256 * 1024 }),
    })
  }
  return reply(
    exchange,
    200,
    { 'Content-Type': CSV_CONTENT_TYPE, 'Content-Disposition': disposition },
    { chunks: () => csvChunks(table) },
  )
}

/** Raw CSV tables are parsed simply (see raw-csv.ts) so fixtures can be fetched as XLSX as well. */
const replyXlsx = (exchange: Exchange, table: SavedTable): Promise<void> => {
  const headers = { 'Content-Type': XLSX_CONTENT_TYPE, 'Content-Disposition': attachment(table.id, 'xlsx') }
  const raw = table.rawXlsx
  if (raw !== undefined && 'file' in raw) {
    return reply(exchange, 200, headers, {
      length: statSync(raw.file).size,
      chunks: () => createReadStream(raw.file, { highWaterMark: 256 * 1024 }),
    })
  }
  if (raw !== undefined) return reply(exchange, 200, headers, bytesBody(raw))
  const records = (): Iterable<Row> =>
    isRawCsvTable(table)
      ? parseRawCsv(table.rawCsv)
      : isCsvFileTable(table)
        ? parseRawCsv(readFileSync(table.csvFile))
        : withHeader(table.columns, table.rows())
  return reply(exchange, 200, headers, { chunks: () => xlsxChunks(table.title, records()) })
}

export const replyExport = (exchange: Exchange, table: SavedTable, format: ExportFormat): Promise<void> =>
  format === 'xlsx' ? replyXlsx(exchange, table) : replyCsv(exchange, table)
