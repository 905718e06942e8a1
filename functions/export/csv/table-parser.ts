/**
 * The whole parse stage on this thread: body bytes -> decode -> csv-parse -> record batches, with the header, the
 * delimiter and the encoding found on the way. `parse-worker.ts` runs the same stage on a thread of its own.
 */
import type { Delimiter } from '../core/constants.ts'
import { DEFAULT_BATCH_LIMITS, type RecordBatch, RecordBatchBuilder } from '../normalize/record-batch.ts'
import type { TableRecords } from '../normalize/table-records.ts'
import { DEFAULT_ENCODING, type DecodeOptions, type DecodeReport, decodeToUtf8 } from './decode.ts'
import { openCsvWith, type ParseOptions } from './parse.ts'

export type TableParserOptions = ParseOptions & Omit<DecodeOptions, 'tableId'>

export interface ParsedTable extends TableRecords {
  readonly delimiter: Delimiter
  /** The encoding actually used and whether the body had a byte-order mark. */
  readonly report: DecodeReport
  /** What parsing accepted but is worth reporting; complete once the batches end. */
  readonly warnings: readonly string[]
}

/** Parses `source` on this thread. */
export const parseInline = async (source: AsyncIterable<Buffer>, options: TableParserOptions): Promise<ParsedTable> => {
  const report: DecodeReport = { encoding: options.encoding ?? DEFAULT_ENCODING, bom: false }
  return parseDecoded(decodeToUtf8(source, options, report), options, report)
}

/** Parses a body already decoded to UTF-8 on this thread; `report` is the decoder's. */
export const parseDecoded = async (
  decoded: AsyncIterable<Buffer>,
  options: TableParserOptions,
  report: DecodeReport,
): Promise<ParsedTable> => {
  const limits = DEFAULT_BATCH_LIMITS
  let builder: RecordBatchBuilder | undefined
  // Each record is copied into the batch being filled as soon as it is parsed, so its strings die young.
  const csv = await openCsvWith(decoded, { ...options, fieldsAsBytes: true }, (record, header) => {
    builder ??= new RecordBatchBuilder(header.length, limits)
    return builder.add(record)
  })
  // A table of a header only made no builder while parsing.
  const filled = builder ?? new RecordBatchBuilder(csv.header.length, limits)
  async function* batches(): AsyncGenerator<RecordBatch> {
    for await (const full of csv.batches) yield* full
    const last = filled.flush()
    if (last) yield last
  }
  return {
    header: csv.header,
    delimiter: csv.delimiter,
    report,
    batches: batches(),
    warnings: csv.warnings,
    recycle: (bytes, offsets) => filled.recycle(bytes, offsets),
    close: async () => {
      await csv.batches.return(undefined)
    },
  }
}
