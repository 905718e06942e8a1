/**
 * Encode stage, file level: our column types as a Parquet schema, the codec, and hyparquet-writer's ParquetWriter
 * writing the file one row group at a time. The writer's buffer is emptied after every row group, so it holds at
 * most one encoded group; its bytes go to whoever owns the file (see table-encoder.ts).
 */
import zlib from 'node:zlib'
import type { SchemaElement } from 'hyparquet'
import { ByteWriter, ParquetWriter } from 'hyparquet-writer'
import type { ColumnType } from '../constants.ts'
import { InternalError } from '../errors.ts'

export interface ParquetColumn {
  readonly name: string
  readonly type: ColumnType
}

/**
 * One column of a row group as hyparquet-writer takes it: a value or null per row. Strings are UTF-8 bytes, as
 * they came from the CSV: the writer then neither encodes them nor compares them as UTF-16.
 */
export type ColumnValues = (bigint | number | boolean | string | Uint8Array | null)[]

const SCHEMA_ELEMENTS: Readonly<Record<ColumnType, Omit<SchemaElement, 'name'>>> = {
  bigint: { type: 'INT64', repetition_type: 'OPTIONAL' },
  double: { type: 'DOUBLE', repetition_type: 'OPTIONAL' },
  boolean: { type: 'BOOLEAN', repetition_type: 'OPTIONAL' },
  date: { type: 'INT32', converted_type: 'DATE', logical_type: { type: 'DATE' }, repetition_type: 'OPTIONAL' },
  timestamp: {
    type: 'INT64',
    converted_type: 'TIMESTAMP_MILLIS',
    logical_type: { type: 'TIMESTAMP', isAdjustedToUTC: true, unit: 'MILLIS' },
    repetition_type: 'OPTIONAL',
  },
  string: { type: 'BYTE_ARRAY', converted_type: 'UTF8', logical_type: { type: 'STRING' }, repetition_type: 'OPTIONAL' },
}

/** zstd where the runtime has it (Node >= 22.15), else snappy; both are read by Athena. */
const zstdCompress = (zlib as { zstdCompressSync?: (input: Uint8Array) => Buffer }).zstdCompressSync
export const PARQUET_CODEC = zstdCompress ? 'ZSTD' : 'SNAPPY'
const COMPRESSORS = zstdCompress ? { ZSTD: (input: Uint8Array) => zstdCompress(input) } : {}

export const parquetSchema = (columns: readonly ParquetColumn[]): SchemaElement[] => [
  { name: 'root', num_children: columns.length },
  ...columns.map(({ name, type }) => ({ name, ...SCHEMA_ELEMENTS[type] }) as SchemaElement),
]

/**
 * A column whose values are made when the writer asks for them. ParquetWriter.write reads each column's `length`
 * up front but takes its values (`slice` of the row group's range) only when it encodes that column; the writer's
 * version is pinned and `test/unit/encoder-parquet.test.ts` checks that columns are made one at a time.
 */
const deferredColumn = (make: () => ColumnValues, rowCount: number): ColumnValues =>
  ({
    length: rowCount,
    slice: (start: number, end: number) => {
      if (start !== 0 || end !== rowCount) {
        throw new InternalError({ reason: `the writer asked for rows ${start}-${end} of a ${rowCount}-row group` })
      }
      return make()
    },
  }) as unknown as ColumnValues

export class ParquetFileEncoder {
  readonly #columns: readonly ParquetColumn[]
  readonly #buffer = new ByteWriter(1024 * 1024)
  readonly #writer: ParquetWriter
  #rows = 0

  constructor(columns: readonly ParquetColumn[], keyValueMetadata: Record<string, string> = {}) {
    this.#columns = columns
    this.#writer = new ParquetWriter({
      writer: this.#buffer,
      schema: parquetSchema(columns),
      codec: PARQUET_CODEC,
      compressors: COMPRESSORS,
      statistics: true,
      kvMetadata: Object.entries(keyValueMetadata).map(([key, value]) => ({ key, value })),
      createdBy: 'inventory-athena-export',
    })
  }

  get rowsWritten(): number {
    return this.#rows
  }

  /** The file's first bytes. */
  start(): Uint8Array {
    return this.#take()
  }

  /**
   * Encodes one row group of `rowCount` rows; `columns[i]` makes column i's values, and is called only when the
   * writer reaches that column, so only one column's values exist at a time. Returns the group's bytes.
   */
  writeRowGroup(columns: readonly (() => ColumnValues)[], rowCount: number): Uint8Array {
    if (columns.length !== this.#columns.length) {
      throw new InternalError({ reason: `row group has ${columns.length} of ${this.#columns.length} columns` })
    }
    if (rowCount === 0) return new Uint8Array(0)
    void this.#writer.write({
      columnData: this.#columns.map((column, i) => ({
        name: column.name,
        data: deferredColumn(columns[i]!, rowCount),
      })),
      rowGroupSize: rowCount,
    })
    this.#rows += rowCount
    this.#detachStatistics()
    return this.#take()
  }

  /** The footer: metadata, its length and the magic number. */
  finish(): Uint8Array {
    void this.#writer.finish()
    return this.#take()
  }

  /**
   * The footer keeps each chunk's min and max until the file ends; as views they would keep the row group's bytes
   * alive with them, so they are copied out.
   */
  #detachStatistics(): void {
    for (const chunk of this.#writer.row_groups.at(-1)?.columns ?? []) {
      const statistics = chunk.meta_data?.statistics
      if (statistics?.min_value instanceof Uint8Array) statistics.min_value = statistics.min_value.slice()
      if (statistics?.max_value instanceof Uint8Array) statistics.max_value = statistics.max_value.slice()
    }
  }

  /** Hands out what the writer wrote since the last call and reuses its buffer (its file offset runs on). */
  #take(): Uint8Array {
    const bytes = this.#buffer.getBytes().slice()
    this.#buffer.index = 0
    return bytes
  }
}
