/**
 * Encode stage, file level: our column types as a Parquet schema, the codec, and the file one row group at a time:
 * each column chunk written by column-chunk.ts from its PLAIN values, the footer by hyparquet-writer. The buffer
 * is emptied after every column chunk (or, without an `emit`, every row group), so it holds at most one encoded
 * chunk; its bytes go to whoever owns the file (see table-encoder.ts).
 */
import zlib from 'node:zlib'
import type { ColumnChunk, SchemaElement } from 'hyparquet'
import { ByteWriter } from 'hyparquet-writer/src/bytewriter.js'
import { snappyCompress } from 'hyparquet-writer/src/snappy.js'
import type { ColumnType } from '../core/constants.ts'
import { InternalError } from '../core/errors.ts'
import type { ChunkValues } from './chunk-values.ts'
import { type PageCodec, writeColumnChunk } from './column-chunk.ts'
import type { ValueEncoding } from './encoding-choice.ts'
import { FooterMetadata } from './footer.ts'

interface ParquetColumn {
  readonly name: string
  readonly type: ColumnType
}

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

/** The type a schema element of a file this exporter wrote stands for (undefined for any other element). */
export const columnTypeOf = (element: SchemaElement): ColumnType | undefined =>
  (Object.keys(SCHEMA_ELEMENTS) as ColumnType[]).find(
    (type) =>
      SCHEMA_ELEMENTS[type].type === element.type && SCHEMA_ELEMENTS[type].converted_type === element.converted_type,
  )

/** zstd where the runtime has it (Node >= 22.15), else snappy; both are read by Athena. */
const zstdCompress = (zlib as { zstdCompressSync?: (input: Uint8Array) => Buffer }).zstdCompressSync
export const PAGE_CODEC: PageCodec = zstdCompress
  ? { name: 'ZSTD', compress: (input) => zstdCompress(input) }
  : { name: 'SNAPPY', compress: snappyCompress }

/**
 * Row groups between the measurements that encode a chunk more than once: a string column's DELTA_LENGTH_BYTE_ARRAY
 * against PLAIN (each page compressed twice: 7% more CPU for the encode on the sparse bench table), and a chunk
 * whose dictionary a sample cannot judge, encoded whole in each candidate (most of the 20% the export lost to
 * larger row groups on the inventory bench table). A column's values keep their shape from one group to the next;
 * in between, each chunk is written as the last measured one chose.
 */
const MEASURE_EVERY = 8

/** "PAR1", the magic number at both ends of a Parquet file. */
const MAGIC = 0x31524150

export const parquetSchema = (columns: readonly ParquetColumn[]): SchemaElement[] => [
  { name: 'root', num_children: columns.length },
  ...columns.map(({ name, type }) => ({ name, ...SCHEMA_ELEMENTS[type] }) as SchemaElement),
]

/** The encoding most of a chunk's data pages took, where it is one of the two that strings are measured in. */
const stringEncodingOf = (chunk: ColumnChunk): 'PLAIN' | 'DELTA_LENGTH_BYTE_ARRAY' | undefined => {
  const pages = (chunk.meta_data?.encoding_stats ?? []).filter((s) => s.page_type === 'DATA_PAGE')
  const most = pages.reduce<(typeof pages)[number] | undefined>((a, b) => (a && a.count >= b.count ? a : b), undefined)
  return most?.encoding === 'PLAIN' || most?.encoding === 'DELTA_LENGTH_BYTE_ARRAY' ? most.encoding : undefined
}

export class ParquetFileEncoder {
  readonly #columns: readonly ParquetColumn[]
  readonly #schema: SchemaElement[]
  readonly #keyValueMetadata: Record<string, string>
  readonly #buffer = new ByteWriter(1024 * 1024)
  readonly #footer: FooterMetadata
  /** Per column, how its last measured chunk wrote strings without a dictionary. */
  readonly #byteArrays: ('PLAIN' | 'DELTA_LENGTH_BYTE_ARRAY' | undefined)[] = []
  /** Per column, what its last whole-chunk measurement chose (column-chunk.ts KnownChoices). */
  readonly #wholeChoices: (ValueEncoding | undefined)[] = []
  #groups = 0
  #rows = 0

  constructor(columns: readonly ParquetColumn[], keyValueMetadata: Record<string, string> = {}) {
    this.#columns = columns
    this.#schema = parquetSchema(columns)
    this.#footer = new FooterMetadata(this.#schema)
    this.#keyValueMetadata = keyValueMetadata
  }

  get rowsWritten(): number {
    return this.#rows
  }

  /** The file's first bytes. */
  start(): Uint8Array {
    this.#buffer.appendUint32(MAGIC)
    return this.#take()
  }

  /**
   * Encodes one row group of `rowCount` rows; `columns[i]` makes column i's values, and is called only when its
   * chunk is written, so only one column's values exist at a time. `betweenColumns` is awaited after each chunk
   * (table-encoder.ts hands the event loop back there, so the next group's batches come in while this one is
   * written). With `emit`, each chunk's bytes are handed to it as soon as the chunk is written, and nothing is
   * returned: holding a whole group's chunks until its end kept the group's compressed bytes (about 5 MiB, in a
   * buffer doubled to fit) and their copy alive at once. Without it, returns the group's bytes. One group at a
   * time: the file's buffer is the group's until then.
   */
  async writeRowGroup(
    columns: readonly (() => ChunkValues)[],
    rowCount: number,
    betweenColumns: () => Promise<void> = async () => {},
    emit?: (bytes: Uint8Array) => void,
  ): Promise<Uint8Array> {
    if (columns.length !== this.#columns.length) {
      throw new InternalError({ reason: `row group has ${columns.length} of ${this.#columns.length} columns` })
    }
    if (rowCount === 0) return new Uint8Array(0)
    const groupStart = this.#buffer.offset
    const chunks: ColumnChunk[] = []
    let uncompressed = 0n
    for (const [i, column] of this.#columns.entries()) {
      const values = columns[i]!()
      if (values.rows !== rowCount) {
        throw new InternalError({ reason: `column ${column.name} has ${values.rows} of ${rowCount} rows` })
      }
      const element = this.#schema[i + 1]!
      const measure = this.#groups % MEASURE_EVERY === 0
      const known = measure ? {} : { byteArrays: this.#byteArrays[i], whole: this.#wholeChoices[i] }
      const { chunk, measuredWhole } = writeColumnChunk(
        this.#buffer,
        column.name,
        element.type!,
        values,
        PAGE_CODEC,
        known,
      )
      if (measure) {
        this.#byteArrays[i] = stringEncodingOf(chunk)
        this.#wholeChoices[i] = measuredWhole
      }
      uncompressed += chunk.meta_data!.total_uncompressed_size
      chunks.push(chunk)
      emit?.(this.#take())
      await betweenColumns()
    }
    this.#footer.addRowGroup({
      columns: chunks,
      total_byte_size: uncompressed,
      num_rows: BigInt(rowCount),
      file_offset: BigInt(groupStart),
      total_compressed_size: BigInt(this.#buffer.offset - groupStart),
    })
    this.#rows += rowCount
    this.#groups++
    return this.#take()
  }

  /** The footer: metadata, its length and the magic number. */
  finish(): Uint8Array {
    this.#footer.write(this.#buffer, {
      version: 1,
      created_by: 'inventory-athena-export',
      num_rows: BigInt(this.#rows),
      key_value_metadata: Object.entries(this.#keyValueMetadata).map(([key, value]) => ({ key, value })),
    })
    this.#buffer.appendUint32(MAGIC)
    return this.#take()
  }

  /** Hands out what was written since the last call and reuses the buffer (its file offset runs on). */
  #take(): Uint8Array {
    const bytes = this.#buffer.getBytes().slice()
    this.#buffer.index = 0
    return bytes
  }
}
