/** Encoding a table as the export does, to a Parquet file the tests read back. */
import { writeFile } from 'node:fs/promises'
import path from 'node:path'
import { parquetMetadata } from 'hyparquet'
import type { ColumnType } from '../../functions/export/core/constants.ts'
import { nameColumns } from '../../functions/export/normalize/columns.ts'
import { type RecordBatch, RecordBatchBuilder } from '../../functions/export/normalize/record-batch.ts'
import { ColumnTypeInferrer } from '../../functions/export/normalize/types.ts'
import { type RowGroupLimits, TableEncoder } from '../../functions/export/parquet/table-encoder.ts'
import type { TableSchema } from '../../functions/export/schema/table-schema.ts'
import { tempDir } from './cli.ts'

export const RUN = {
  runId: '20260101T000000Z-abcdef01',
  exportDate: '2026-01-01',
  exportedAt: new Date('2026-01-01T02:03:04Z'),
}

export interface Encoded {
  readonly file: string
  readonly bytes: Buffer
  readonly restarts: number
  readonly rows: number
  /** How often the encoder waited for its output while encoding from the spool. */
  readonly drains: number
}

export const batchesOf = (records: readonly string[][], columns: number, rowsPerBatch: number): RecordBatch[] => {
  const builder = new RecordBatchBuilder(columns, { maxCells: rowsPerBatch * columns, maxBytes: 1 << 20 })
  // Fields as csv-parse hands them over when reading bytes: each UTF-8 byte one Latin-1 character.
  const asBytes = (record: readonly string[]) => record.map((field) => Buffer.from(field).toString('latin1'))
  const batches = records.map((record) => builder.add(asBytes(record))).filter((b): b is RecordBatch => b !== undefined)
  const last = builder.flush()
  return last ? [...batches, last] : batches
}

/** Encodes a table (a header and records) as the export does, to a file DuckDB can read. */
export const encode = async (
  header: readonly string[],
  records: readonly string[][],
  options: {
    rowsPerBatch?: number
    rowGroupLimits?: RowGroupLimits
    forced?: Record<string, ColumnType>
    previous?: TableSchema
    /** Told 'push N' as the Nth batch's push resolves and 'write' as bytes go out, in the order they happen. */
    trace?: string[]
    /** Write the file on a thread of its own, as an export with threads to spare does. */
    thread?: boolean
    spoolPath?: string
  } = {},
): Promise<Encoded> => {
  const dir = await tempDir('inventory-encoder-')
  let parts: Uint8Array[] = []
  let restarts = 0
  let drains = 0
  const columns = nameColumns(header)
  const types = new ColumnTypeInferrer({
    tableId: 't1',
    columnNames: columns.map((c) => c.name),
    forced: options.forced ?? {},
  })
  const encoder = new TableEncoder(
    {
      tableId: 't1',
      table: 'things',
      exportDate: RUN.exportDate,
      columns,
      types,
      previous: options.previous,
      run: RUN,
      spoolPath: options.spoolPath ?? path.join(dir, 'spool.bin'),
      rowGroupLimits: options.rowGroupLimits,
      thread: options.thread,
    },
    {
      write: (bytes) => {
        options.trace?.push('write')
        parts.push(bytes)
      },
      restart: () => {
        parts = []
        restarts++
      },
      drained: async () => {
        drains++
      },
    },
  )
  // As the export's path does: the types learn from each batch before it is encoded.
  for (const [n, batch] of batchesOf(records, header.length, options.rowsPerBatch ?? 1000).entries()) {
    types.observe(batch)
    await encoder.push(batch)
    options.trace?.push(`push ${n + 1}`)
    // As the parse thread's next batch does: it arrives on a later turn of the event loop.
    await new Promise((resolve) => setImmediate(resolve))
  }
  const { rows } = await encoder.finish()
  await encoder.close()
  const bytes = Buffer.concat(parts)
  const file = path.join(dir, 'things.parquet')
  await writeFile(file, bytes)
  return { file, bytes, restarts, rows, drains }
}

export const metadataOf = (bytes: Buffer) =>
  parquetMetadata(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length) as ArrayBuffer)
