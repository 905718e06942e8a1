/**
 * A run of a CSV body's bytes parsed on its own, exactly as the whole file would parse it from there: the record
 * guard and csv-parse with the file's options, records into batches. The chunks of a parallel parse
 * (`parallel-parse.ts`) go through here, on a worker or, to redo one, on the calling thread; so does its header.
 * A segment starts at a record boundary (one that may only be guessed) on known line numbers, and when it is not
 * the body's last it ends after a line break that may be inside a quoted field: then its last record is left open
 * and said where it starts, instead of failing.
 */
import type { Delimiter } from '../core/constants.ts'
import type { RecordBatch, RecordBatchBuilder } from '../normalize/record-batch.ts'
import { parseRecords } from './parse.ts'
import { countGuardLines, type RecordLimits } from './record-guard.ts'

/** What stays the same for every segment of a body. */
export interface SegmentOptions {
  readonly tableId: string
  readonly delimiter: Delimiter
  readonly headerFields: number
  readonly shortRows: 'fail' | 'pad'
  readonly limits: RecordLimits
}

/** Where a segment starts. */
export interface SegmentStart {
  /** csv-parse's line number of the first byte. */
  readonly line: number
  /** The record guard's line number of the first byte (it counts a CRLF in a quoted field once, csv-parse twice). */
  readonly guardLine: number
  /** Number given to the segment's first data row. */
  readonly firstRow: number
  /** csv-parse's line on which the record before the segment ended. @default line - 1 */
  readonly lastRecordLine?: number | undefined
  /** The first record is the header (the segment starts the body). */
  readonly header: boolean
  /** The segment ends the body: a quote still open at its end is the file's error, not an unfinished record. */
  readonly last: boolean
}

export interface SegmentResult {
  /** The header, decoded, when the segment starts the body. */
  readonly header?: string[]
  /** The data rows, numbered from `firstRow` on. */
  readonly batches: RecordBatch[]
  readonly rows: number
  /** Line numbers where the bytes after the segment start. */
  readonly nextLine: number
  readonly nextGuardLine: number
  /** csv-parse's line on which the segment's last complete record ended. */
  readonly lastRecordLine: number
  /** The last record is unfinished (a quote still open at the end): byte of the segment it starts at, and its lines. */
  readonly open?: { readonly start: number; readonly line: number; readonly guardLine: number }
  /** Line of the first record with a stray quote kept as text. */
  readonly looseQuoteLine?: number
}

/** Bytes handed to the guard and csv-parse at a time, as the serial parse does (see parse-worker.ts). */
const SLICE_BYTES = 64 * 1024

/** Parses `bytes`, a whole segment, collecting its batches. */
export const parseSegment = async (
  bytes: Buffer,
  options: SegmentOptions,
  start: SegmentStart,
  builder: RecordBatchBuilder,
): Promise<SegmentResult> => {
  const batches: RecordBatch[] = []
  const records = parseSegmentStream(slices(bytes), options, start, builder)
  let next = await records.next()
  for (; !next.done; next = await records.next()) batches.push(next.value)
  const { header, rows, end, looseQuoteLine } = next.value
  const open = end.open && {
    ...end.open,
    guardLine: start.guardLine + countGuardLines(bytes.subarray(0, end.open.start)),
  }
  return {
    ...(header ? { header } : {}),
    batches,
    rows,
    nextLine: end.nextLine,
    lastRecordLine: end.lastRecordLine,
    nextGuardLine: start.guardLine + countGuardLines(bytes),
    ...(open ? { open } : {}),
    ...(looseQuoteLine === undefined ? {} : { looseQuoteLine }),
  }
}

/** Parses a segment as it streams in (the rest of a body that a parallel parse leaves to one thread). */
export async function* parseSegmentStream(
  source: AsyncIterable<Buffer>,
  options: SegmentOptions,
  start: SegmentStart,
  builder: RecordBatchBuilder,
) {
  let header: string[] | undefined
  let rows = 0
  let yielded = 0
  let looseQuoteLine: number | undefined
  const parsing = {
    ...options,
    fieldsAsBytes: true,
    firstLine: start.line,
    guardLine: start.guardLine,
    lastRecordLine: start.lastRecordLine,
    afterHeader: !start.header,
    openEnd: !start.last,
    onLooseQuote: (line: number) => {
      looseQuoteLine ??= line
    },
  }
  const records = parseRecords(source, parsing, (record) => {
    if (start.header && header === undefined) {
      header = record.map((field) => Buffer.from(field, 'latin1').toString('utf8'))
      return undefined
    }
    rows++
    return builder.add(record)
  })
  const renumber = (batch: RecordBatch): RecordBatch => {
    const numbered = { ...batch, firstRow: start.firstRow + yielded }
    yielded += batch.rowCount
    return numbered
  }
  try {
    let next = await records.next()
    for (; !next.done; next = await records.next()) for (const batch of next.value) yield renumber(batch)
    const last = builder.flush()
    if (last) yield renumber(compact(last, builder))
    return { header, rows, end: next.value, looseQuoteLine }
  } finally {
    // A failed segment leaves rows in the builder: they belong to no batch anyone will see.
    if (yielded < rows) builder.flush()
  }
}

/**
 * A segment's last batch, usually part full, in buffers of its size: the encoder holds a row group's batches, and
 * a part-full batch per chunk in full-size buffers would double what it holds. The full-size ones are kept for reuse.
 */
const compact = (batch: RecordBatch, builder: RecordBatchBuilder): RecordBatch => {
  if (2 * batch.bytes.byteLength > batch.bytes.buffer.byteLength) return batch
  const smaller = { ...batch, bytes: batch.bytes.slice(), offsets: batch.offsets.slice() }
  builder.recycle(batch.bytes.buffer as ArrayBuffer, batch.offsets.buffer as ArrayBuffer)
  return smaller
}

async function* slices(bytes: Buffer): AsyncGenerator<Buffer> {
  for (let at = 0; at < bytes.length; at += SLICE_BYTES) yield bytes.subarray(at, at + SLICE_BYTES)
}
