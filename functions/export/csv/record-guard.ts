/**
 * Limits, not the input, bound the parser's memory. csv-parse collects every field of a record before anything
 * can look at it, so a line of a million commas costs a million strings, and a 300 MB field costs its buffer and
 * its string. This guard walks the bytes in front of csv-parse with the same quoting rules, and fails the table
 * as soon as a record has more fields, or a field or record more bytes, than the limits allow: csv-parse never
 * sees the chunk that would break them.
 */
import { DataError } from '../errors.ts'

/** The `limits` section of the configuration. */
export interface RecordLimits {
  /** Fields in any record, the header included. */
  readonly maxColumns: number
  /** Bytes of one record (delimiters and quotes included). */
  readonly maxRecordBytes: number
  /** Bytes of one field. */
  readonly maxFieldBytes: number
}

const MiB = 1024 * 1024
export const DEFAULT_RECORD_LIMITS: RecordLimits = {
  maxColumns: 2000,
  maxRecordBytes: 64 * MiB,
  maxFieldBytes: 16 * MiB,
}

const QUOTE = 0x22
const LF = 0x0a
const CR = 0x0d

/** Throws the coded failure for a broken limit. */
export const limitExceeded = (
  tableId: string,
  limit: keyof RecordLimits,
  value: number,
  line: number,
  what: string,
): DataError =>
  new DataError('LIMIT_EXCEEDED', {
    tableId,
    line,
    reason: `${what} on line ${line} is over limits.${limit} (${value})`,
    hint: `the previous data is kept; raise limits.${limit} in the configuration if the table really is that wide or long, or fix the saved table`,
  })

/** Yields `source` unchanged, after checking each chunk against the limits. */
export async function* guardRecords(
  source: AsyncIterable<Buffer>,
  delimiter: string,
  limits: RecordLimits,
  tableId: string,
): AsyncGenerator<Buffer> {
  const separator = delimiter.charCodeAt(0)
  const { maxColumns, maxRecordBytes, maxFieldBytes } = limits
  let line = 1
  let recordLine = 1
  let quoteLine = 1
  let fields = 1
  let recordBytes = 0
  let fieldBytes = 0
  let quoted = false
  /** A quote inside a quoted field: the next byte tells an escaped quote from the closing one. */
  let quoteSeen = false
  let afterCr = false
  for await (const chunk of source) {
    for (let i = 0; i < chunk.length; i++) {
      const byte = chunk[i]!
      recordBytes++
      if (byte === LF && afterCr) {
        afterCr = false
        continue
      }
      afterCr = byte === CR
      if (quoteSeen) {
        quoteSeen = false
        if (byte === QUOTE) {
          fieldBytes++
          continue
        }
        quoted = false
      }
      if (quoted) {
        if (byte === QUOTE) quoteSeen = true
        else if (byte === LF || byte === CR) line++
        fieldBytes++
      } else if (byte === separator) {
        fieldBytes = 0
        if (++fields > maxColumns)
          throw limitExceeded(tableId, 'maxColumns', maxColumns, recordLine, `the record starting`)
      } else if (byte === LF || byte === CR) {
        line++
        recordLine = line
        fields = 1
        recordBytes = 0
        fieldBytes = 0
      } else if (byte === QUOTE && fieldBytes === 0) {
        quoted = true
        quoteLine = line
        fieldBytes++
      } else fieldBytes++
      if (fieldBytes > maxFieldBytes) {
        const what = quoted ? `a field quoted from line ${quoteLine} (a quote never closed does this too)` : 'a field'
        throw limitExceeded(tableId, 'maxFieldBytes', maxFieldBytes, recordLine, `${what} of the record starting`)
      }
      if (recordBytes > maxRecordBytes)
        throw limitExceeded(tableId, 'maxRecordBytes', maxRecordBytes, recordLine, 'the record starting')
    }
    yield chunk
  }
}
