/**
 * Bytes a column takes in Parquet files, from their footers: what one column costs of the output (such as the
 * `_row_fingerprint` lineage hash), and each data column of ours beside the same column of DuckDB's file, with the
 * encodings each writer chose. Both sides are read with DuckDB's parquet_metadata(), so both are counted alike.
 */
import { open, readdir } from 'node:fs/promises'
import path from 'node:path'
import { DuckDBInstance } from '@duckdb/node-api'
import { parquetMetadata } from 'hyparquet'
import { LINEAGE_COLUMN_NAMES, RESERVED_COLUMN_NAMES } from '../functions/export/core/lineage.ts'
import { nameColumns } from '../functions/export/normalize/columns.ts'

const footer = async (file: string): Promise<Uint8Array> => {
  const handle = await open(file, 'r')
  try {
    const { size } = await handle.stat()
    const tail = Buffer.alloc(8)
    await handle.read(tail, 0, 8, size - 8)
    const length = tail.readUInt32LE(0) + 8
    const bytes = Buffer.alloc(length)
    await handle.read(bytes, 0, length, size - length)
    return bytes
  } finally {
    await handle.close()
  }
}

const parquetFiles = async (folder: string): Promise<string[]> =>
  (await readdir(folder, { recursive: true, withFileTypes: true }))
    .filter((entry) => entry.isFile() && entry.name.endsWith('.parquet'))
    .map((entry) => path.join(entry.parentPath, entry.name))

/** The compressed bytes of `column`'s chunks, pages and dictionaries, summed over every `.parquet` under `folder`. */
export const columnBytes = async (folder: string, column: string): Promise<number> => {
  let total = 0
  for (const file of await parquetFiles(folder)) {
    const metadata = parquetMetadata(await footer(file))
    for (const group of metadata.row_groups)
      for (const chunk of group.columns)
        if (chunk.meta_data?.path_in_schema.join('.') === column) total += Number(chunk.meta_data.total_compressed_size)
  }
  return total
}

/** One column in one writer's files: its compressed bytes over every row group, and every encoding it used. */
interface ColumnFootprint {
  readonly bytes: number
  readonly encodings: string
}

/** A data column of ours beside DuckDB's of the same CSV column. */
export interface ColumnComparison {
  readonly column: string
  readonly ours: number
  readonly duckdb: number
  readonly ratio: number
  readonly ourEncodings: string
  readonly duckdbEncodings: string
}

export interface DataColumnsComparison {
  /** Our data columns' bytes (lineage columns aside) over DuckDB's bytes for the same columns. */
  readonly dataColumnsVsDuckdb: number
  readonly columns: readonly ColumnComparison[]
}

/** Per column of `files`: compressed bytes and the encodings of its data pages (dictionary pages' PLAIN aside). */
const footprints = async (files: readonly string[]): Promise<Map<string, ColumnFootprint>> => {
  const instance = await DuckDBInstance.create(':memory:', { threads: '1' })
  const connection = await instance.connect()
  try {
    const list = files.map((file) => `'${file.replaceAll("'", "''")}'`).join(', ')
    const reader = await connection.runAndReadAll(
      `SELECT path_in_schema, sum(total_compressed_size)::BIGINT, string_agg(DISTINCT encodings, ' | ' ORDER BY encodings)
       FROM parquet_metadata([${list}]) GROUP BY path_in_schema`,
    )
    return new Map(
      reader
        .getRows()
        .map(([name, bytes, encodings]) => [String(name), { bytes: Number(bytes), encodings: String(encodings) }]),
    )
  } finally {
    connection.closeSync()
    instance.closeSync()
  }
}

/**
 * Our files under `folder` beside DuckDB's `duckdbFile` of the same CSV, whose `headers` name DuckDB's columns
 * (ours are named from them as the export names them). Lineage columns are left out: DuckDB has none.
 */
export const compareDataColumns = async (
  folder: string,
  duckdbFile: string,
  headers: readonly string[],
): Promise<DataColumnsComparison> => {
  const ours = await footprints(await parquetFiles(folder))
  const theirs = await footprints([duckdbFile])
  const named = nameColumns(headers, RESERVED_COLUMN_NAMES)
  const columns: ColumnComparison[] = []
  for (const { name, header } of named) {
    if (LINEAGE_COLUMN_NAMES.includes(name)) continue
    const our = ours.get(name)
    const their = theirs.get(header)
    if (!our || !their) continue
    columns.push({
      column: name,
      ours: our.bytes,
      duckdb: their.bytes,
      ratio: our.bytes / their.bytes,
      ourEncodings: our.encodings,
      duckdbEncodings: their.encodings,
    })
  }
  const sum = (pick: (c: ColumnComparison) => number) => columns.reduce((total, c) => total + pick(c), 0)
  return { dataColumnsVsDuckdb: sum((c) => c.ours) / sum((c) => c.duckdb), columns }
}

/** The comparison as lines of a table, widest ratio first; a column over `limit` x DuckDB's is marked OVER. */
export const formatComparison = ({ columns, dataColumnsVsDuckdb }: DataColumnsComparison, limit?: number): string[] => [
  `${'column'.padEnd(24)} ${'ours'.padStart(11)} ${'duckdb'.padStart(11)} ${'ratio'.padStart(6)}  our encodings / duckdb's`,
  ...[...columns]
    .sort((a, b) => b.ratio - a.ratio)
    .map(
      (c) =>
        `${c.column.padEnd(24)} ${String(c.ours).padStart(11)} ${String(c.duckdb).padStart(11)} ${c.ratio.toFixed(2).padStart(6)}  ${c.ourEncodings} / ${c.duckdbEncodings}${limit !== undefined && c.ratio > limit ? `  OVER ${limit} x` : ''}`,
    ),
  `data columns (lineage aside): ${dataColumnsVsDuckdb.toFixed(3)} x DuckDB's bytes`,
]
