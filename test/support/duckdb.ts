/** DuckDB, the local stand-in for Athena: reads back what the exporter wrote. */
import { DuckDBInstance } from '@duckdb/node-api'

export type Row = Record<string, unknown>

/** Runs SQL on a fresh in-memory DuckDB; values come back as JSON-friendly types (bigint and dates as strings). */
export const query = async (sql: string): Promise<Row[]> => {
  const instance = await DuckDBInstance.create(':memory:')
  const connection = await instance.connect()
  try {
    const reader = await connection.runAndReadAll(sql)
    return reader.getRowObjectsJson() as Row[]
  } finally {
    connection.closeSync()
    instance.closeSync()
  }
}

/** Column names and DuckDB types of a Parquet file or glob, in file order. */
export const describe = async (parquet: string): Promise<{ name: string; type: string }[]> =>
  (await query(`SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM read_parquet('${parquet}'))`)).map(
    (row) => ({
      name: String(row.column_name),
      type: String(row.column_type),
    }),
  )
