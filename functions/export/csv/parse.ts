/**
 * Parse stage: UTF-8 bytes in, the header and batches of records out, through csv-parse.
 * Records are collected with `on_record` (synchronously, one batch per input chunk) instead of being pushed
 * through an object-mode stream, which would cost an async hop per record.
 */
import { CsvError } from 'csv-parse'
import type { Delimiter } from '../core/constants.ts'
import { DataError } from '../core/errors.ts'
import { replay } from './chunks.ts'
import { CsvRun, type RunSetup } from './csv-run.ts'
import { type HeaderScan, scanHeaderLine } from './dialect.ts'
import { readPreamble } from './preamble.ts'
import {
  limitExceeded,
  MAX_ENDING_CHANGES,
  type RecordEnding,
  type RecordLimits,
  RecordScanner,
} from './record-guard.ts'

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
  const { buffered, ended, scan, firstLine } = await readHeaderLine(
    iterator,
    options.delimiter,
    limits,
    options.tableId,
  )
  let header: string[] | undefined
  const warnings: string[] = []
  const parsing = {
    ...options,
    delimiter: scan.delimiter,
    headerFields: scan.fieldCount,
    onLooseQuote: (line: number) => warnings.push(looseQuoteWarning(line)),
  }
  const body = replay(buffered, ended ? undefined : iterator)
  const batches = parseRecords(body, { ...parsing, limits, firstLine }, (record) => {
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
  /** From the header line's first byte on. */
  readonly buffered: readonly Buffer[]
  /** Everything read, blank lines and `sep=` line included: the body from its start. */
  readonly read: readonly Buffer[]
  /** Whether the body ended within `buffered`. */
  readonly ended: boolean
  readonly scan: HeaderScan
  /** csv-parse's line number of the header line (after blank lines and a `sep=` line). */
  readonly firstLine: number
}

/**
 * Reads the body until its header line is complete; fails on a header wider than the limits allow. Blank lines
 * and a `sep=` line before it are passed over (see preamble.ts); a forced delimiter wins over `sep=`.
 */
export const readHeaderLine = async (
  iterator: AsyncIterator<Buffer>,
  forced: Delimiter | undefined,
  limits: RecordLimits,
  tableId: string,
): Promise<HeaderLine> => {
  const preamble = await readPreamble(iterator, MAX_HEADER_BYTES)
  const delimiter = forced ?? preamble.delimiter
  const buffered = [...preamble.buffered]
  const read = [...preamble.read]
  let size = buffered.reduce((sum, chunk) => sum + chunk.length, 0)
  let scan = scanHeaderLine(buffered.length === 1 ? buffered[0]! : Buffer.concat(buffered), delimiter)
  let ended = preamble.ended
  while (!ended && !scan.complete && size < MAX_HEADER_BYTES && scan.fieldCount <= limits.maxColumns) {
    const next = await iterator.next()
    if (next.done) {
      ended = true
      break
    }
    // A copy: the caller may reuse a chunk's memory once the chunks after it are parsed (see parse-worker.ts).
    const copy = Buffer.from(next.value)
    buffered.push(copy)
    read.push(copy)
    size += next.value.length
    scan = scanHeaderLine(buffered.length === 1 ? copy : Buffer.concat(buffered), delimiter)
  }
  // The count only grows past the part scanned: a header this wide fails before csv-parse makes a string of it.
  if (scan.fieldCount > limits.maxColumns) {
    throw limitExceeded(tableId, 'maxColumns', limits.maxColumns, 1 + preamble.lines, 'the header')
  }
  return { buffered, read, ended, scan, firstLine: 1 + preamble.lines }
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
  /** The record guard's line number of the first byte (see segment.ts). @default firstLine */
  readonly guardLine?: number | undefined
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
  const firstLine = options.firstLine ?? 1
  const scanner = new RecordScanner(
    options.delimiter.charCodeAt(0),
    options.limits,
    options.tableId,
    options.guardLine ?? firstLine,
  )
  /** Line on which the last complete record ended, and where in the body (for error messages and `open`). */
  const position = { lastRecordLine: options.lastRecordLine ?? firstLine - 1, lastRecordEnd: 0 }
  /** The header's fields, once known: a run after the first reads a stand-in header of as many. */
  let fields = options.afterHeader ? options.headerFields : undefined
  let looseQuoteSeen = false
  const setup: RunSetup = {
    delimiter: options.delimiter,
    fieldsAsBytes: options.fieldsAsBytes === true,
    padShortRows: options.shortRows === 'pad',
    // A blank line cannot be a record of a multi-column table; in a one-column table it is a NULL value.
    skipEmptyLines: options.headerFields > 1,
    onRecord: (record, end, line, standIn) => {
      fields ??= record.length
      if (standIn) return
      // Only the first record with a stray quote is reported; the guard found where it is.
      if (!looseQuoteSeen && scanner.looseQuote >= 0 && end > scanner.looseQuote) {
        looseQuoteSeen = true
        options.onLooseQuote(position.lastRecordLine + 1)
      }
      position.lastRecordLine = line
      position.lastRecordEnd = end
      const item = take(record)
      if (item !== undefined) pending.push(item)
    },
  }
  let run: CsvRun | undefined
  let changes = 0
  /**
   * A run for `ending` (every ending when undefined, or past the guard's last reported change), reading a
   * stand-in header once the header's width is known.
   */
  const startRun = async (ending: RecordEnding | undefined, offset: number, line: number) => {
    if (ending) changes++
    const follow = ending && changes < MAX_ENDING_CHANGES ? ending : undefined
    const started = new CsvRun(setup, follow, { offset, line, standInFields: fields })
    await started.start()
    return started
  }
  /** Bytes of the body before the current chunk. */
  let offset = 0
  /** The last chunk ended in a CR outside quotes, not yet given to csv-parse: its ending was not known yet. */
  let heldCR = false
  try {
    for await (const chunk of source) {
      if (chunk.length === 0) continue
      const { changes: found, endsInCR } = scanner.scan(chunk)
      let next = 0
      if (!run) {
        // The first record ending decides the run's; a chunk with none yet starts with every ending.
        run = await startRun(found[0]?.ending, 0, firstLine)
        if (found.length > 0) next = 1
      }
      if (heldCR && found[0]?.at !== -1) await run.write(CR_BYTES)
      let from = 0
      for (; next < found.length; next++) {
        // Another ending: this run ends with the record that ends here, and a run for the new ending goes on.
        const { at, ending } = found[next]!
        if (at > from) await run.write(chunk.subarray(from, at))
        from = at + ending.length
        await run.terminate(offset + from)
        await run.end()
        const ended = run
        run = await startRun(ending, offset + from, ended.nextLine)
        ended.destroy()
      }
      heldCR = endsInCR
      const to = endsInCR ? chunk.length - 1 : chunk.length
      if (to > from) await run.write(chunk.subarray(from, to))
      offset += chunk.length
      if (pending.length > 0) {
        const batch = pending
        pending = []
        yield batch
      }
    }
    run ??= await startRun(undefined, 0, firstLine)
    // The body's last byte is a CR: any line break ends the last record as it does.
    if (heldCR) await run.terminate(offset)
    let open: RecordsEnd['open']
    try {
      await run.end()
    } catch (error) {
      if (!(options.openEnd && error instanceof CsvError && error.code === 'CSV_QUOTE_NOT_CLOSED')) throw error
      open = { start: position.lastRecordEnd, line: position.lastRecordLine + 1 }
    }
    if (pending.length > 0) yield pending
    return { nextLine: run.nextLine, lastRecordLine: position.lastRecordLine, ...(open ? { open } : {}) }
  } catch (error) {
    throw toParseError(error, options, position.lastRecordLine, run?.lineOffset ?? firstLine - 1)
  } finally {
    run?.destroy()
  }
}

/** A CR held back from the end of a chunk, given to csv-parse once it is known to end a record as the run's do. */
const CR_BYTES = Buffer.from('\r')

const QUOTING_HINT =
  'a field with a quote, delimiter or line break must be quoted, and a quote inside it doubled; the previous data is kept'

/** csv-parse's errors -> coded errors naming the line; anything else passes through unchanged. */
const toParseError = (
  error: unknown,
  { tableId }: { tableId: string },
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
    default:
      return new DataError('CSV_MALFORMED', {
        tableId,
        ...(line === undefined ? {} : { line }),
        reason: `malformed CSV on line ${line}: ${error.message}`,
        hint: QUOTING_HINT,
      })
  }
}

export const looseQuoteWarning = (line: number): string =>
  `a quote inside an unquoted field (or after a closing quote) was kept as text, first in the record starting on line ${line}; the saved table's export does not quote such fields`
