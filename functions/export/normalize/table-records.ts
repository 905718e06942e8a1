/**
 * What every table format's read stage hands to the common path: the header and the data records in batches.
 * The CSV parser (csv/table-parser.ts) and the workbook reader (xlsx/reader.ts) both produce it; from here on a
 * table is named, typed, encoded and published the same way whatever it was read from.
 */
import type { RecordBatch } from './record-batch.ts'

export interface TableRecords {
  readonly header: readonly string[]
  /** The data records in batches, in order. */
  readonly batches: AsyncIterable<RecordBatch>
  /** Hands back a batch's buffers once nothing reads the batch any more, for the next batches. */
  recycle(bytes: ArrayBuffer, offsets: ArrayBuffer): void
  /** Stops reading (early or not) and frees what it holds; safe to call more than once. */
  close(): Promise<void>
}
