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
/** A byte of 1s, 0x23s (the first byte above the quote) and the high bits, repeated over a 32-bit word. */
const ONES = 0x01010101
const BELOW_QUOTE = 0x23232323
const HIGH_BITS = 0x80808080 | 0

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

/** How a record ends outside quotes. */
export type RecordEnding = '\n' | '\r\n' | '\r'

/** A record ending unlike the one before it (the first ending of all counts as one). */
export interface EndingChange {
  /** Offset in the chunk of the ending's first byte: -1 for a CR that ended the chunk before. */
  readonly at: number
  readonly ending: RecordEnding
}

/** What a chunk holds that the parse must act on before csv-parse sees it. */
export interface ChunkEndings {
  /** Where the record ending changes, in order (at most `MAX_ENDING_CHANGES` for the whole body). */
  readonly changes: readonly EndingChange[]
  /** The chunk ends in a CR outside quotes: whether it is a CRLF is known with the next chunk's first byte. */
  readonly endsInCR: boolean
}

/** Changes of record ending reported for a body, at most: past these the parse accepts every ending anyway. */
export const MAX_ENDING_CHANGES = 8

const NO_CHANGES: readonly EndingChange[] = []

/**
 * The quoting state carried from one chunk to the next. Lengths are measured where a field or record ends and at
 * the end of each chunk, so an ordinary byte costs one comparison: the guard must not slow the parse it protects.
 * On the way it notes what only a walk with the quoting rules can tell: how each record ends (so that csv-parse can
 * be given one record delimiter, see parse.ts), and the first quote that csv-parse will keep as text.
 */
export class RecordScanner {
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
  /** Bytes of the body before the current chunk. */
  #offset = 0
  /** How the last record ended, and the changes still to report. */
  #ending: RecordEnding | undefined
  #changesLeft = MAX_ENDING_CHANGES
  /** The last chunk ended in a CR outside quotes. */
  #pendingCR = false
  #looseQuote = -1
  /** A record of at most this many bytes is within every limit: it cannot hold more fields than bytes, plus one. */
  readonly #plainBytes: number
  /**
   * The first CR, and quote, of the chunk being scanned at or after some offset the guard has reached (the chunk's
   * length: none); one below the current offset is stale. -1 at the start of each chunk.
   */
  #nextCR = -1
  #nextQuote = -1

  constructor(separator: number, limits: RecordLimits, tableId: string, firstLine: number) {
    this.#separator = separator
    this.#limits = limits
    this.#tableId = tableId
    this.#line = firstLine
    this.#recordLine = firstLine
    this.#quoteLine = firstLine
    this.#plainBytes = Math.min(limits.maxColumns - 1, limits.maxFieldBytes, limits.maxRecordBytes)
  }

  /**
   * Offset in the body of the first quote csv-parse keeps as text (inside an unquoted field, or after a closing
   * quote and not followed by a delimiter or line break), or -1.
   */
  get looseQuote(): number {
    return this.#looseQuote
  }

  /** Checks a chunk against the limits (throwing the coded failure) and reports its record endings. */
  scan(chunk: Buffer): ChunkEndings {
    const n = chunk.length
    if (n === 0) return { changes: NO_CHANGES, endsInCR: false }
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
    let changes: EndingChange[] | undefined
    let endsInCR = false
    const ended = (at: number, ending: RecordEnding) => {
      if (ending === this.#ending || this.#changesLeft === 0) return
      this.#ending = ending
      this.#changesLeft--
      changes ??= []
      changes.push({ at, ending })
    }
    let i = 0
    if (this.#pendingCR) {
      this.#pendingCR = false
      ended(-1, chunk[0] === LF ? '\r\n' : '\r')
    }
    if (this.#quoteSeen) {
      this.#quoteSeen = false
      if (chunk[0] === QUOTE) i = 1
      else {
        quoted = false
        this.#closed(chunk[0]!, separator, -1)
      }
    }
    const words = new DataView(chunk.buffer, chunk.byteOffset, n)
    const separators = Math.imul(separator, ONES)
    this.#nextCR = -1
    this.#nextQuote = -1
    // Whole plain records, from a chunk that starts a record (see #passPlainRecords).
    if (i === 0 && !quoted && recordCarry === 0 && this.#lastByte === LF) {
      i = this.#passPlainRecords(chunk, 0)
      line += this.#passed
      recordLine = line
      fieldStart = i
      recordStart = i
    }
    for (; i < n; i++) {
      // Four ordinary bytes at a time: none below 0x23 (quote, line breaks, control bytes) and none the separator,
      // tested on the word with the has-less-than and has-zero bit tricks (exact for these bounds). Records are
      // mostly short fields between separators, so most words still hold one; on the bench tables this took a fifth
      // to a third off the scan.
      while (i + 4 <= n) {
        const word = words.getInt32(i, true)
        const other = word ^ separators
        if (((word - BELOW_QUOTE) & ~word & HIGH_BITS) | ((other - ONES) & ~other & HIGH_BITS)) break
        i += 4
      }
      if (i === n) break
      const byte = chunk[i]!
      if (byte > QUOTE && byte !== separator) continue
      const previous = i === 0 ? this.#lastByte : chunk[i - 1]!
      if (quoted) {
        if (byte === QUOTE) {
          if (i + 1 === n) {
            this.#quoteSeen = true
            break
          }
          const next = chunk[i + 1]!
          if (next === QUOTE) i++
          else {
            quoted = false
            this.#closed(next, separator, i)
          }
        } else if (byte === CR || (byte === LF && previous !== CR)) line++
      } else if (byte === separator) {
        this.#checkField(fieldCarry + i - fieldStart, recordLine, false)
        fieldStart = i + 1
        fieldCarry = 0
        if (++fields > maxColumns) this.#fail('maxColumns', recordLine, 'the record starting')
      } else if (byte === LF && previous === CR) {
        i = this.#passPlainRecords(chunk, i + 1) - 1
        line += this.#passed
        recordLine = line
        fieldStart = i + 1
        recordStart = i + 1
      } else if (byte === LF || byte === CR) {
        if (byte === LF) ended(i, '\n')
        else if (i + 1 < n) ended(i, chunk[i + 1] === LF ? '\r\n' : '\r')
        else endsInCR = true
        this.#checkField(fieldCarry + i - fieldStart, recordLine, false)
        this.#checkRecord(recordCarry + i - recordStart, recordLine)
        line++
        recordLine = line
        fields = 1
        fieldStart = i + 1
        recordStart = i + 1
        fieldCarry = 0
        recordCarry = 0
        if (byte === LF) {
          i = this.#passPlainRecords(chunk, i + 1) - 1
          line += this.#passed
          recordLine = line
          fieldStart = i + 1
          recordStart = i + 1
        }
      } else if (byte === QUOTE) {
        if (i === fieldStart && fieldCarry === 0) {
          quoted = true
          this.#quoteLine = line
        } else if (this.#looseQuote < 0) this.#looseQuote = this.#offset + i
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
    this.#offset += n
    this.#pendingCR = endsInCR
    return { changes: changes ?? NO_CHANGES, endsInCR }
  }

  /** Records passed by the last #passPlainRecords. */
  #passed = 0

  /**
   * Passes the whole records from `from` (the first byte of a record, after an LF) that the byte walk would pass
   * with no other effect than counting their lines: each ends in this chunk, in the line break the records before
   * it ended in, within #plainBytes; and holds no CR but its line break's, and only quotes that open a field and
   * close it before a delimiter or line break. Its line break, CRs and quotes are found with Buffer.indexOf, which
   * runs at memory speed where the walk does not (a third of the guard's time on the bench tables went to bytes of
   * such records). Returns where the walk goes on, and sets #passed to the records passed.
   */
  #passPlainRecords(chunk: Buffer, from: number): number {
    const n = chunk.length
    const separator = this.#separator
    // Only records that change nothing: the ending of the records before (or any, once changes are no longer reported).
    const anyEnding = this.#changesLeft === 0
    const crlf = this.#ending === '\r\n'
    this.#passed = 0
    if (!anyEnding && !crlf && this.#ending !== '\n') return from
    let at = from
    while (at < n) {
      const lf = chunk.indexOf(LF, at)
      if (lf === -1 || lf - at > this.#plainBytes) break
      if (this.#nextCR < at) this.#nextCR = indexIn(chunk, CR, at)
      const endsInCRLF = this.#nextCR === lf - 1 && lf > at
      if (this.#nextCR < lf && !endsInCRLF) break
      if (!anyEnding && endsInCRLF !== crlf) break
      const end = endsInCRLF ? lf - 1 : lf
      if (this.#nextQuote < at) this.#nextQuote = indexIn(chunk, QUOTE, at)
      let quote = this.#nextQuote
      while (quote < end) {
        // A quote that does not start a field is text to csv-parse (the walk notes the first such one).
        if (quote !== at && chunk[quote - 1] !== separator) return at
        let close = indexIn(chunk, QUOTE, quote + 1)
        while (close + 1 < n && chunk[close + 1] === QUOTE) close = indexIn(chunk, QUOTE, close + 2)
        // Past the record's line break the field holds a line break; at the chunk's end it is not yet known.
        if (close >= end || close + 1 >= n) return at
        const next = chunk[close + 1]
        if (next !== separator && next !== CR && next !== LF) return at
        quote = indexIn(chunk, QUOTE, close + 1)
      }
      this.#nextQuote = quote
      this.#passed++
      at = lf + 1
    }
    return at
  }

  /** A quote at `at` closed a quoted field; `next` is the byte after it. */
  #closed(next: number, separator: number, at: number): void {
    if (this.#looseQuote < 0 && next !== separator && next !== CR && next !== LF) this.#looseQuote = this.#offset + at
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

/** Offset of the first `byte` in `chunk` from `from` on, or the chunk's length if there is none. */
const indexIn = (chunk: Buffer, byte: number, from: number): number => {
  const at = chunk.indexOf(byte, from)
  return at === -1 ? chunk.length : at
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
