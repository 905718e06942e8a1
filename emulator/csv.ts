/** RFC 4180 rendering of generated tables: the bytes the service's CSV export would send. */
import type { GeneratedTable, Row } from './tables.ts'

const NEEDS_QUOTES = /[",\r\n]/
const CRLF = '\r\n'
/** Rows are gathered into chunks of about this many characters so each write is worth a syscall. */
export const CSV_CHUNK_CHARS = 64 * 1024

/** One cell: quoted only when it holds a comma, a quote or a line break; quotes are doubled; null is empty. */
export const encodeCsvCell = (value: string | null): string => {
  if (value === null) return ''
  return NEEDS_QUOTES.test(value) ? `"${value.replaceAll('"', '""')}"` : value
}

/** One record including its CRLF terminator. */
export const encodeCsvRecord = (cells: Row): string => cells.map(encodeCsvCell).join(',') + CRLF

/** The table as UTF-8 chunks: header record, then every row; nothing is kept once yielded. */
export function* csvChunks(table: GeneratedTable): Generator<Uint8Array> {
  let pending = encodeCsvRecord(table.columns)
  for (const row of table.rows()) {
    pending += encodeCsvRecord(row)
    if (pending.length >= CSV_CHUNK_CHARS) {
      yield Buffer.from(pending, 'utf8')
      pending = ''
    }
  }
  if (pending.length > 0) yield Buffer.from(pending, 'utf8')
}
