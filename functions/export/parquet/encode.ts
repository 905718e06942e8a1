/**
 * Encode stage: typed row groups in, Parquet bytes out, one row group at a time, through hyparquet-writer.
 * Bytes leave through an async sink after every row group, so memory holds at most one encoded group.
 */
import zlib from 'node:zlib'
import type { SchemaElement } from 'hyparquet'
import { ByteWriter, ParquetWriter } from 'hyparquet-writer'
import type { ColumnType } from '../constants.ts'
import { InternalError } from '../errors.ts'
import type { CellColumn } from '../normalize/spool.ts'
import { parseBigint, parseBoolean, parseDate, parseDouble, parseTimestamp } from '../normalize/values.ts'

export interface ParquetColumn {
  readonly name: string
  readonly type: ColumnType
}

/** Receives the file's bytes in order; the returned promise gives backpressure. */
export type ByteSink = (chunk: Uint8Array) => Promise<void>

/** Typed values of one column of a row group, as hyparquet-writer takes them. */
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

/** A ByteWriter that hands its bytes to the sink after each row group and reuses its buffer. */
class SinkWriter extends ByteWriter {
  readonly #sink: ByteSink
  constructor(sink: ByteSink) {
    super(1024 * 1024)
    this.#sink = sink
  }
  flush(): Promise<void> {
    const bytes = this.getBytes().slice()
    this.index = 0
    return this.#sink(bytes)
  }
  override finish(): Promise<void> {
    return this.flush()
  }
}

export class ParquetFileEncoder {
  readonly #columns: readonly ParquetColumn[]
  readonly #writer: ParquetWriter
  #rows = 0

  constructor(
    columns: readonly ParquetColumn[],
    sink: ByteSink,
    options: { keyValueMetadata?: Record<string, string> } = {},
  ) {
    this.#columns = columns
    this.#writer = new ParquetWriter({
      writer: new SinkWriter(sink),
      schema: parquetSchema(columns),
      codec: PARQUET_CODEC,
      compressors: COMPRESSORS,
      statistics: true,
      kvMetadata: Object.entries(options.keyValueMetadata ?? {}).map(([key, value]) => ({ key, value })),
      createdBy: 'inventory-athena-export',
    })
  }

  get rowsWritten(): number {
    return this.#rows
  }

  /** Writes one row group; `values[i]` belongs to column i. */
  async writeRowGroup(values: readonly ColumnValues[], rowCount: number): Promise<void> {
    if (rowCount === 0) return
    await this.#writer.write({
      columnData: this.#columns.map((column, i) => ({ name: column.name, data: values[i]! })),
      rowGroupSize: rowCount,
    })
    this.#rows += rowCount
  }

  async finish(): Promise<void> {
    await this.#writer.finish()
  }
}

const CONVERTERS: Readonly<Record<ColumnType, (text: string) => bigint | number | boolean | string | undefined>> = {
  bigint: parseBigint,
  double: parseDouble,
  boolean: parseBoolean,
  date: parseDate,
  timestamp: parseTimestamp,
  string: (text) => text,
}

/**
 * Converts one column's cells to `type`. Inference guarantees every non-empty cell converts; a cell that does
 * not (possible only when a schema pins an older type) is reported through `onMisfit` and written as NULL.
 */
export const convertColumn = (
  type: ColumnType,
  cells: CellColumn,
  onMisfit?: (row: number, text: string) => void,
): ColumnValues => {
  const convert = CONVERTERS[type]
  const out: ColumnValues = new Array(cells.length)
  for (let row = 0; row < cells.length; row++) {
    const text = cells.text(row)
    if (text === null) {
      out[row] = null
      continue
    }
    const value = convert(text)
    if (value === undefined) {
      if (!onMisfit) {
        throw new InternalError({
          reason: `the value "${text.slice(0, 40)}" does not convert to ${type}, though inference chose that type`,
        })
      }
      onMisfit(row, text)
      out[row] = null
    } else out[row] = value
  }
  return out
}
