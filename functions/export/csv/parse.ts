/**
 * Parse stage: UTF-8 bytes in, the header and batches of records out, through csv-parse.
 * Records are collected with `on_record` (synchronously, one batch per input chunk) instead of being pushed
 * through an object-mode stream, which would cost an async hop per record.
 */
import { CsvError, type Info, parse } from 'csv-parse'
import type { Delimiter } from '../core/constants.ts'
import { DataError } from '../core/errors.ts'
import { replay } from './chunks.ts'
import { type HeaderScan, scanHeaderLine } from './dialect.ts'
import { guardRecords, limitExceeded, type RecordLimits } from './record-guard.ts'

export interface ParseOptions {
  readonly tableId: string
  /** Forced delimiter; detected from the header line when absent. */
  readonly delimiter?: Delimiter | undefined
  readonly shortRows: 'fail' | 'pad'
  /**
   * Hand data fields over as byte strings (each UTF-8 byte one Latin-1 character) rather than decoded text:
   * cheaper for csv-parse, and exactly the bytes for callers that write them out again (record batches).
   * The header is decoded either way.
   */
  readonly fieldsAsBytes?: boolean | undefined
  /** The `limits` section: how wide and long a record may be. */
  readonly limits: RecordLimits
}

export interface ParsedCsv<T = string[]> {
  readonly delimiter: Delimiter
  readonly header: readonly string[]
  /**
   * Data records (or what a taker made of them) in batches, one per input chunk that produced any; a record may be
   * shorter than the header only when `shortRows` is 'pad'.
   */
  readonly batches: AsyncGenerator<T[]>
  /** What was accepted but is worth knowing (a quote kept as text); complete once the batches end. */
  readonly warnings: readonly string[]
}

/** Makes an item of each data record as soon as it is parsed, or nothing yet (a builder that fills batches). */
type RecordTaker<T> = (record: string[], header: readonly string[]) => T | undefined

/** The header line must show up within this many bytes. */
const MAX_HEADER_BYTES = 4 * 1024 * 1024
/**
 * Every record may end in CRLF, LF or a lone CR. csv-parse would otherwise lock onto the first line's ending,
 * then keep a stray CR at the end of values or merge lines when a file mixes them.
 */
const RECORD_DELIMITERS = ['\r\n', '\n', '\r']

/**
 * Opens a CSV body, handing each data record to `take` as soon as csv-parse completes it, so that records need not
 * pile up until a chunk is parsed (for a builder that copies them out, that keeps almost nothing alive).
 */
export const openCsvWith = async <T>(
  source: AsyncIterable<Buffer>,
  options: ParseOptions,
  take: RecordTaker<T>,
): Promise<ParsedCsv<T>> => {
  const iterator = source[Symbol.asyncIterator]()
  const { limits } = options
  const { buffered, ended, scan } = await readHeaderLine(iterator, options.delimiter, limits, options.tableId)
  let header: string[] | undefined
  const warnings: string[] = []
  const parsing = {
    ...options,
    delimiter: scan.delimiter,
    headerFields: scan.fieldCount,
    onLooseQuote: (line: number) => warnings.push(looseQuoteWarning(line)),
  }
  const guarded = guardRecords(replay(buffered, ended ? undefined : iterator), scan.delimiter, limits, options.tableId)
  const batches = parseRecords(guarded, { ...parsing, limits }, (record) => {
    if (header !== undefined) return take(record, header)
    header = options.fieldsAsBytes ? record.map((field) => Buffer.from(field, 'latin1').toString('utf8')) : record
    return undefined
  })
  const first = await batches.next()
  if (header === undefined) {
    throw new DataError('CSV_MALFORMED', { tableId: options.tableId, reason: 'the file has no header line' })
  }
  async function* rest() {
    if (!first.done) yield first.value
    yield* batches
  }
  return { delimiter: scan.delimiter, header, batches: rest(), warnings }
}

/** The start of the body up to the end of the header line (copied), and the header line's dialect. */
interface HeaderLine {
  readonly buffered: readonly Buffer[]
  /** Whether the body ended within `buffered`. */
  readonly ended: boolean
  readonly scan: HeaderScan
}

/** Reads the body until its header line is complete; fails on a header wider than the limits allow. */
export const readHeaderLine = async (
  iterator: AsyncIterator<Buffer>,
  forced: Delimiter | undefined,
  limits: RecordLimits,
  tableId: string,
): Promise<HeaderLine> => {
  const buffered: Buffer[] = []
  let size = 0
  let scan = scanHeaderLine(Buffer.alloc(0), forced)
  let ended = false
  while (!scan.complete && size < MAX_HEADER_BYTES && scan.fieldCount <= limits.maxColumns) {
    const next = await iterator.next()
    if (next.done) {
      ended = true
      break
    }
    // A copy: the caller may reuse a chunk's memory once the chunks after it are parsed (see parse-worker.ts).
    buffered.push(Buffer.from(next.value))
    size += next.value.length
    scan = scanHeaderLine(buffered.length === 1 ? next.value : Buffer.concat(buffered), forced)
  }
  // The count only grows past the part scanned: a header this wide fails before csv-parse makes a string of it.
  if (scan.fieldCount > limits.maxColumns) {
    throw limitExceeded(tableId, 'maxColumns', limits.maxColumns, 1, 'the header')
  }
  return { buffered, ended, scan }
}

/** Where csv-parse stands once a run of bytes is parsed. */
interface RecordsEnd {
  /** csv-parse's line number after the last byte: where the bytes after these start. */
  readonly nextLine: number
  /** csv-parse's line number on which the last complete record ended (the header's, or `lastRecordLine` given). */
  readonly lastRecordLine: number
  /**
   * Only with `openEnd`: the bytes ended inside a quoted field, so their last record is unfinished; it starts at
   * byte `start` of the bytes given (the stand-in header left out), on line `line`.
   */
  readonly open?: { readonly start: number; readonly line: number }
}

interface RecordParseOptions extends ParseOptions {
  readonly delimiter: Delimiter
  readonly headerFields: number
  readonly limits: RecordLimits
  /** Called with the line of the first record that holds a stray quote kept as text. */
  readonly onLooseQuote: (line: number) => void
  /** csv-parse's line number of the first byte. @default 1 */
  readonly firstLine?: number | undefined
  /**
   * Line on which the record before these bytes ended (a chunk of a parallel parse), which messages count from as
   * a whole file's parse does: blank lines between it and the next record leave it as it was. @default firstLine - 1
   */
  readonly lastRecordLine?: number | undefined
  /**
   * The bytes start after the header (a chunk of a parallel parse): csv-parse first reads a stand-in header of
   * `headerFields` empty fields, so that it holds the records to the header's length as in a whole file.
   */
  readonly afterHeader?: boolean | undefined
  /** The bytes end at a line break that may be inside a quoted field: an unclosed quote there is returned, not thrown. */
  readonly openEnd?: boolean | undefined
}

export async function* parseRecords<T>(
  source: AsyncIterable<Buffer>,
  options: RecordParseOptions,
  take: (record: string[]) => T | undefined,
): AsyncGenerator<T[], RecordsEnd> {
  let pending: T[] = []
  let failure: unknown
  const firstLine = options.firstLine ?? 1
  const standIn = options.afterHeader
    ? Buffer.from(`${options.delimiter.repeat(options.headerFields - 1)}\n`)
    : undefined
  /** csv-parse counts lines from 1 at the stand-in header, if any, and from `firstLine` here. */
  const lineOffset = firstLine - (standIn ? 2 : 1)
  const standInBytes = standIn?.length ?? 0
  let skip = standIn ? 1 : 0
  /** Line on which the last complete record ended: the next record starts after it (for error messages). */
  const lineBefore = options.lastRecordLine ?? firstLine - 1
  const position = { lastRecordLine: lineBefore, lastRecordEnd: 0 }
  const raw = new RecordBytes()
  let looseQuoteSeen = false
  const parser = parse({
    delimiter: options.delimiter,
    encoding: options.fieldsAsBytes ? 'latin1' : 'utf8',
    record_delimiter: RECORD_DELIMITERS,
    relax_column_count_less: options.shortRows === 'pad',
    // A blank line cannot be a record of a multi-column table; in a one-column table it is a NULL value.
    skip_empty_lines: options.headerFields > 1,
    // A second net behind the guard (it counts characters of fields, the guard bytes of records).
    max_record_size: options.limits.maxRecordBytes,
    // A stray quote is kept as text, as DuckDB, pandas and Python's csv do; an unclosed quote still fails.
    relax_quotes: true,
    on_record: (record: string[], info: Info) => {
      // Only the first record with a stray quote is reported, so the check stops once one is found.
      if (!looseQuoteSeen && hasQuote(record)) {
        if (hasLooseQuote(raw.take(info.bytes), options.delimiter.charCodeAt(0))) {
          looseQuoteSeen = true
          options.onLooseQuote(position.lastRecordLine + 1)
        }
      }
      if (!looseQuoteSeen) raw.recordEnded(info.bytes)
      // The stand-in header ends where the record before these bytes did, as far as messages go.
      position.lastRecordLine = skip > 0 ? lineBefore : info.lines + lineOffset
      position.lastRecordEnd = info.bytes - standInBytes
      if (skip > 0) {
        skip--
        return null
      }
      const item = take(record)
      if (item !== undefined) pending.push(item)
      return null
    },
  })
  parser.on('error', (error) => {
    failure ??= error
  })
  parser.resume()
  const settle = (write: (done: (error?: Error | null) => void) => void) =>
    new Promise<void>((resolve, reject) => write((error) => (error || failure ? reject(error ?? failure) : resolve())))
  try {
    if (standIn) {
      raw.add(standIn)
      await settle((done) => parser.write(standIn, done))
    }
    for await (const chunk of source) {
      if (!looseQuoteSeen) raw.add(chunk)
      await settle((done) => parser.write(chunk, done))
      if (pending.length > 0) {
        const batch = pending
        pending = []
        yield batch
      }
    }
    let open: RecordsEnd['open']
    try {
      await settle((done) => parser.end(done))
      if (failure) throw failure
    } catch (error) {
      if (!(options.openEnd && error instanceof CsvError && error.code === 'CSV_QUOTE_NOT_CLOSED')) throw error
      open = { start: position.lastRecordEnd, line: position.lastRecordLine + 1 }
    }
    if (pending.length > 0) yield pending
    return {
      nextLine: parser.info.lines + lineOffset,
      lastRecordLine: position.lastRecordLine,
      ...(open ? { open } : {}),
    }
  } catch (error) {
    throw toParseError(error, options, position.lastRecordLine, lineOffset)
  } finally {
    parser.destroy()
  }
}

const QUOTING_HINT =
  'a field with a quote, delimiter or line break must be quoted, and a quote inside it doubled; the previous data is kept'

/** csv-parse's errors -> coded errors naming the line; anything else passes through unchanged. */
const toParseError = (
  error: unknown,
  { tableId, limits }: { tableId: string; limits: RecordLimits },
  lastRecordLine: number,
  lineOffset: number,
): unknown => {
  if (!(error instanceof CsvError)) return error
  const line = typeof error.lines === 'number' ? error.lines + lineOffset : undefined
  switch (error.code) {
    case 'CSV_RECORD_INCONSISTENT_FIELDS_LENGTH': {
      const expected = /expect (\d+)/.exec(error.message)?.[1]
      const got = Array.isArray(error.record) ? error.record.length : /got (\d+)/.exec(error.message)?.[1]
      return new DataError('ROW_FIELD_COUNT', {
        tableId,
        ...(line === undefined ? {} : { line }),
        reason: `the record ending on line ${line} has ${got} fields where the header has ${expected}`,
        hint: 'fix the saved table, or set the table\'s "delimiter"; "shortRows": "pad" accepts rows with missing trailing fields',
      })
    }
    case 'CSV_QUOTE_NOT_CLOSED': {
      // The transport has checked that the whole body arrived, so this is the file's content, not a cut-off.
      const opened = lastRecordLine + 1
      return new DataError('CSV_MALFORMED', {
        tableId,
        line: opened,
        reason: `the file ends inside a quoted field: a quote opened in the record starting on line ${opened} is never closed`,
        hint: 'fix the quoting in the saved table (a quote inside a quoted field is written as two quotes); the previous data is kept',
      })
    }
    case 'INVALID_OPENING_QUOTE':
    case 'CSV_INVALID_CLOSING_QUOTE': {
      const field = typeof error.column === 'number' ? ` ${error.column + 1}` : ''
      const what =
        error.code === 'INVALID_OPENING_QUOTE'
          ? `a quote inside unquoted field${field}`
          : `text after the closing quote of field${field}`
      return new DataError('CSV_MALFORMED', {
        tableId,
        ...(line === undefined ? {} : { line }),
        reason: `malformed CSV on line ${line}: ${what}`,
        hint: QUOTING_HINT,
      })
    }
    case 'CSV_MAX_RECORD_SIZE':
      return new DataError('CSV_MALFORMED', {
        tableId,
        ...(line === undefined ? {} : { line }),
        reason: `a record on line ${line} exceeds ${limits.maxRecordBytes} characters (limits.maxRecordBytes); an opening quote is probably never closed`,
      })
    default:
      return new DataError('CSV_MALFORMED', {
        tableId,
        ...(line === undefined ? {} : { line }),
        reason: `malformed CSV on line ${line}: ${error.message}`,
        hint: QUOTING_HINT,
      })
  }
}

const hasQuote = (record: readonly string[]): boolean => {
  for (let i = 0; i < record.length; i++) if (record[i]!.indexOf('"') !== -1) return true
  return false
}

export const looseQuoteWarning = (line: number): string =>
  `a quote inside an unquoted field (or after a closing quote) was kept as text, first in the record starting on line ${line}; the saved table's export does not quote such fields`

/**
 * The bytes of the record being parsed. The part of it in chunks already left is kept as a copy, since a caller may
 * reuse a chunk's memory once the chunk after it is parsed; that is a few bytes per chunk, a record at most.
 */
class RecordBytes {
  #parts: { start: number; bytes: Buffer }[] = []
  #current: Buffer = Buffer.alloc(0)
  #currentStart = 0
  #recordStart = 0

  add(chunk: Buffer): void {
    const from = Math.max(0, this.#recordStart - this.#currentStart)
    if (from < this.#current.length) {
      this.#parts.push({ start: this.#currentStart + from, bytes: Buffer.from(this.#current.subarray(from)) })
    }
    this.#currentStart += this.#current.length
    this.#current = chunk
  }

  recordEnded(end: number): void {
    this.#recordStart = end
    if (this.#parts.length > 0) {
      this.#parts = this.#parts
        .filter((part) => part.start + part.bytes.length > end)
        .map((part) => (part.start >= end ? part : { start: end, bytes: part.bytes.subarray(end - part.start) }))
    }
  }

  /** The record's bytes up to stream offset `end`. */
  take(end: number): Buffer {
    const from = Math.max(0, this.#recordStart - this.#currentStart)
    const tail = this.#current.subarray(from, Math.max(from, end - this.#currentStart))
    return this.#parts.length === 0 ? tail : Buffer.concat([...this.#parts.map((part) => part.bytes), tail])
  }
}

const QUOTE = 0x22
const CR = 0x0d
const LF = 0x0a

/** Whether a record's bytes hold a quote that relax_quotes kept as text: inside an unquoted field, or after a closing one. */
export const hasLooseQuote = (bytes: Uint8Array, delimiter: number): boolean => {
  let fieldStart = true
  let quoted = false
  for (let i = 0; i < bytes.length; i++) {
    const byte = bytes[i]
    if (quoted) {
      if (byte !== QUOTE) continue
      if (bytes[i + 1] === QUOTE) {
        i++
        continue
      }
      quoted = false
      const next = bytes[i + 1]
      if (next !== undefined && next !== delimiter && next !== CR && next !== LF) return true
    } else if (byte === delimiter || byte === CR || byte === LF) fieldStart = true
    else if (byte === QUOTE && !fieldStart) return true
    else {
      quoted = byte === QUOTE
      fieldStart = false
    }
  }
  return false
}
