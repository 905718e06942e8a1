/**
 * Limits, not the input, bound the parser's memory. csv-parse collects every field of a record before anything
 * can look at it, so a line of a million commas costs a million strings, and a 300 MB field costs its buffer and
 * its string. This guard walks the bytes in front of csv-parse with the same quoting rules, and fails the table
 * as soon as a record has more fields, or a field or record more bytes, than the limits allow: csv-parse never
 * sees the chunk that would break them.
 */
import { DataError } from '../core/errors.ts'

/** The `limits` section of the configuration (its defaults are in the configuration schema, core/config/schema.ts). */
export interface RecordLimits {
  /** Fields in any record, the header included. */
  readonly maxColumns: number
  /** Bytes of one record (delimiters and quotes included). */
  readonly maxRecordBytes: number
  /** Bytes of one field. */
  readonly maxFieldBytes: number
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
  /** The line the first byte is on (a chunk of a parallel parse starts further down). */
  firstLine = 1,
): AsyncGenerator<Buffer> {
  const scanner = new RecordScanner(delimiter.charCodeAt(0), limits, tableId, firstLine)
  for await (const chunk of source) {
    scanner.scan(chunk)
    yield chunk
  }
}

/**
 * The quoting state carried from one chunk to the next. Lengths are measured where a field or record ends and at
 * the end of each chunk, so an ordinary byte costs one comparison: the guard must not slow the parse it protects.
 */
class RecordScanner {
  readonly #separator: number
  readonly #limits: RecordLimits
  readonly #tableId: string
  #line: number
  #recordLine: number
  #quoteLine: number
  #fields = 1
  /** Bytes of the current record and field before the current chunk. */
  #recordBytes = 0
  #fieldBytes = 0
  #quoted = false
  /** A quote ended the last chunk inside a quoted field: the next byte tells an escaped quote from a closing one. */
  #quoteSeen = false
  #lastByte = 0

  constructor(separator: number, limits: RecordLimits, tableId: string, firstLine: number) {
    this.#separator = separator
    this.#limits = limits
    this.#tableId = tableId
    this.#line = firstLine
    this.#recordLine = firstLine
    this.#quoteLine = firstLine
  }

  scan(chunk: Uint8Array): void {
    const n = chunk.length
    if (n === 0) return
    const separator = this.#separator
    const { maxColumns } = this.#limits
    let line = this.#line
    let recordLine = this.#recordLine
    let fields = this.#fields
    let quoted = this.#quoted
    let fieldCarry = this.#fieldBytes
    let recordCarry = this.#recordBytes
    let fieldStart = 0
    let recordStart = 0
    let i = 0
    if (this.#quoteSeen) {
      this.#quoteSeen = false
      if (chunk[0] === QUOTE) i = 1
      else quoted = false
    }
    for (; i < n; i++) {
      const byte = chunk[i]!
      if (byte > QUOTE && byte !== separator) continue
      const previous = i === 0 ? this.#lastByte : chunk[i - 1]!
      if (quoted) {
        if (byte === QUOTE) {
          if (i + 1 === n) {
            this.#quoteSeen = true
            break
          }
          if (chunk[i + 1] === QUOTE) i++
          else quoted = false
        } else if (byte === CR || (byte === LF && previous !== CR)) line++
      } else if (byte === separator) {
        this.#checkField(fieldCarry + i - fieldStart, recordLine, false)
        fieldStart = i + 1
        fieldCarry = 0
        if (++fields > maxColumns) this.#fail('maxColumns', recordLine, 'the record starting')
      } else if (byte === LF && previous === CR) {
        fieldStart = i + 1
        recordStart = i + 1
      } else if (byte === LF || byte === CR) {
        this.#checkField(fieldCarry + i - fieldStart, recordLine, false)
        this.#checkRecord(recordCarry + i - recordStart, recordLine)
        line++
        recordLine = line
        fields = 1
        fieldStart = i + 1
        recordStart = i + 1
        fieldCarry = 0
        recordCarry = 0
      } else if (byte === QUOTE && i === fieldStart && fieldCarry === 0) {
        quoted = true
        this.#quoteLine = line
      }
    }
    fieldCarry += n - fieldStart
    recordCarry += n - recordStart
    this.#checkField(fieldCarry, recordLine, quoted)
    this.#checkRecord(recordCarry, recordLine)
    this.#line = line
    this.#recordLine = recordLine
    this.#fields = fields
    this.#quoted = quoted
    this.#fieldBytes = fieldCarry
    this.#recordBytes = recordCarry
    this.#lastByte = chunk[n - 1]!
  }

  #checkField(bytes: number, recordLine: number, quoted: boolean): void {
    if (bytes <= this.#limits.maxFieldBytes) return
    const what = quoted ? `a field quoted from line ${this.#quoteLine} (a quote never closed does this too)` : 'a field'
    this.#fail('maxFieldBytes', recordLine, `${what} of the record starting`)
  }

  #checkRecord(bytes: number, recordLine: number): void {
    if (bytes > this.#limits.maxRecordBytes) this.#fail('maxRecordBytes', recordLine, 'the record starting')
  }

  #fail(limit: keyof RecordLimits, line: number, what: string): never {
    throw limitExceeded(this.#tableId, limit, this.#limits[limit], line, what)
  }
}

/**
 * Line breaks as the guard counts them (a CR, or an LF not right after a CR; quoted or not), in bytes that do not
 * start with the LF of a CRLF: what the guard's line number advances by over them.
 */
export const countGuardLines = (bytes: Uint8Array): number => {
  let lines = 0
  for (let at = bytes.indexOf(CR); at !== -1; at = bytes.indexOf(CR, at + 1)) lines++
  for (let at = bytes.indexOf(LF); at !== -1; at = bytes.indexOf(LF, at + 1))
    if (at === 0 || bytes[at - 1] !== CR) lines++
  return lines
}
