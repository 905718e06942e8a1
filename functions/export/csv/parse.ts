/**
 * Parse stage: UTF-8 bytes in, the header and batches of records out, through csv-parse.
 * Records are collected with `on_record` (synchronously, one batch per input chunk) instead of being pushed
 * through an object-mode stream, which would cost an async hop per record.
 */
import { CsvError, type Info, parse } from 'csv-parse'
import type { Delimiter } from '../constants.ts'
import { DataError } from '../errors.ts'
import { scanHeaderLine } from './dialect.ts'

export interface ParseOptions {
  readonly tableId: string
  /** Forced delimiter; detected from the header line when absent. */
  readonly delimiter?: Delimiter | undefined
  readonly shortRows: 'fail' | 'pad'
}

export interface ParsedCsv {
  readonly delimiter: Delimiter
  readonly header: readonly string[]
  /** Data records in batches; a record may be shorter than the header only when `shortRows` is 'pad'. */
  readonly batches: AsyncGenerator<string[][]>
}

/** The header line must show up within this many bytes. */
const MAX_HEADER_BYTES = 4 * 1024 * 1024
/** Bounds the memory one record may take, so an unclosed quote cannot swallow the rest of a large file. */
export const MAX_RECORD_CHARS = 128 * 1024 * 1024
/**
 * Every record may end in CRLF, LF or a lone CR. csv-parse would otherwise lock onto the first line's ending,
 * then keep a stray CR at the end of values or merge lines when a file mixes them.
 */
const RECORD_DELIMITERS = ['\r\n', '\n', '\r']

export const openCsv = async (source: AsyncIterable<Buffer>, options: ParseOptions): Promise<ParsedCsv> => {
  const iterator = source[Symbol.asyncIterator]()
  const buffered: Buffer[] = []
  let size = 0
  let scan = scanHeaderLine(Buffer.alloc(0), options.delimiter)
  let ended = false
  while (!scan.complete && size < MAX_HEADER_BYTES) {
    const next = await iterator.next()
    if (next.done) {
      ended = true
      break
    }
    buffered.push(next.value)
    size += next.value.length
    scan = scanHeaderLine(buffered.length === 1 ? next.value : Buffer.concat(buffered), options.delimiter)
  }
  async function* replay() {
    yield* buffered
    if (!ended) for (let next = await iterator.next(); !next.done; next = await iterator.next()) yield next.value
  }
  const batches = parseRecords(replay(), { ...options, delimiter: scan.delimiter, headerFields: scan.fieldCount })
  const first = await batches.next()
  const header = first.done ? undefined : first.value.shift()
  if (header === undefined) {
    throw new DataError('CSV_MALFORMED', { tableId: options.tableId, reason: 'the file has no header line' })
  }
  async function* rest() {
    if (!first.done && first.value.length > 0) yield first.value
    yield* batches
  }
  return { delimiter: scan.delimiter, header, batches: rest() }
}

async function* parseRecords(
  source: AsyncIterable<Buffer>,
  options: ParseOptions & { delimiter: Delimiter; headerFields: number },
): AsyncGenerator<string[][]> {
  let pending: string[][] = []
  let failure: unknown
  /** Line on which the last complete record ended: the next record starts after it (for error messages). */
  const position = { lastRecordLine: 0 }
  const parser = parse({
    delimiter: options.delimiter,
    record_delimiter: RECORD_DELIMITERS,
    relax_column_count_less: options.shortRows === 'pad',
    // A blank line cannot be a record of a multi-column table; in a one-column table it is a NULL value.
    skip_empty_lines: options.headerFields > 1,
    max_record_size: MAX_RECORD_CHARS,
    on_record: (record: string[], info: Info) => {
      position.lastRecordLine = info.lines
      pending.push(record)
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
    for await (const chunk of source) {
      await settle((done) => parser.write(chunk, done))
      if (pending.length > 0) {
        const batch = pending
        pending = []
        yield batch
      }
    }
    await settle((done) => parser.end(done))
    if (failure) throw failure
    if (pending.length > 0) yield pending
  } catch (error) {
    throw toParseError(error, options.tableId, position.lastRecordLine)
  } finally {
    parser.destroy()
  }
}

const QUOTING_HINT =
  'a field with a quote, delimiter or line break must be quoted, and a quote inside it doubled; the previous data is kept'

/** csv-parse's errors -> coded errors naming the line; anything else passes through unchanged. */
const toParseError = (error: unknown, tableId: string, lastRecordLine: number): unknown => {
  if (!(error instanceof CsvError)) return error
  const line = typeof error.lines === 'number' ? error.lines : undefined
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
        reason: `a record on line ${line} exceeds ${MAX_RECORD_CHARS} characters; an opening quote is probably never closed`,
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
