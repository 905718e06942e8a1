/**
 * DuckDB over the local warehouse, with the names analysts use in Athena: every table and view is built from the
 * `TableInput` the Lambda would send to Glue for it (checked against Glue's rules first), so the local answers are
 * Athena's, projection range included. DuckDB is a dev dependency: the local runner uses it, the Lambda never does.
 */
import path from 'node:path'
import type { TableInput } from '@aws-sdk/client-glue'
import { DuckDBInstance } from '@duckdb/node-api'
import {
  assertGlueAccepts,
  athenaTableDefinition,
  FolderWarehouseStore,
  glueTableInputs,
  LOCAL_GLUE_DATABASE,
  readTableSchema,
  SCHEMAS_FOLDER,
} from '../export/index.ts'
import { registerCatalog } from './duckdb-catalog.ts'

export interface QueryResult {
  readonly columns: readonly string[]
  readonly rows: readonly (readonly unknown[])[]
}

/** The Glue database the local catalog stands for. */
export const LOCAL_DATABASE = LOCAL_GLUE_DATABASE

/** Tables of the warehouse: those with a schema in the registry. */
export const warehouseTables = async (root: string): Promise<string[]> => {
  const store = new FolderWarehouseStore(root)
  const keys = await store.listKeys(SCHEMAS_FOLDER)
  const names = keys.map((key) => path.posix.basename(key, '.json'))
  const tables: string[] = []
  for (const name of names) if (await readTableSchema(store, name)) tables.push(name)
  return tables.sort()
}

/** The Glue definitions of every table of the warehouse and its views, located in the warehouse folder. */
export const warehouseTableInputs = async (root: string, database = LOCAL_DATABASE): Promise<TableInput[]> => {
  const store = new FolderWarehouseStore(root)
  const inputs: TableInput[] = []
  for (const table of await warehouseTables(root)) {
    const schema = (await readTableSchema(store, table))!
    const definition = athenaTableDefinition(schema, database, `${path.join(store.root, table)}${path.sep}`)
    for (const input of glueTableInputs(definition)) {
      assertGlueAccepts(input, schema.sourceTableId)
      inputs.push(input)
    }
  }
  return inputs
}

export interface QueryOptions {
  /** The catalog to query through; the warehouse's own definitions when absent. */
  readonly inputs?: readonly TableInput[]
  /** What NOW means in projection ranges. @default the current time */
  readonly now?: Date
}

/** Runs `sql` with every table of the warehouse registered. Values come back JSON-friendly. */
export const queryWarehouse = async (root: string, sql: string, options: QueryOptions = {}): Promise<QueryResult> => {
  const inputs = options.inputs ?? (await warehouseTableInputs(root))
  const instance = await DuckDBInstance.create(':memory:')
  const connection = await instance.connect()
  try {
    await registerCatalog(connection, LOCAL_DATABASE, inputs, options.now ?? new Date())
    const reader = await connection.runAndReadAll(sql)
    return { columns: reader.columnNames(), rows: reader.getRowsJson() }
  } finally {
    connection.closeSync()
    instance.closeSync()
  }
}

/** A plain-text table of a result, cells clipped to keep lines readable. */
export const renderResult = (result: QueryResult, maxCell = 40): string => {
  const cell = (value: unknown): string => {
    const text =
      value === null || value === undefined ? 'NULL' : typeof value === 'object' ? JSON.stringify(value) : String(value)
    const flat = text.replace(/\r?\n/g, '⏎')
    return flat.length > maxCell ? `${flat.slice(0, maxCell - 1)}…` : flat
  }
  const rows = result.rows.map((row) => row.map(cell))
  const widths = result.columns.map((name, i) => Math.max(name.length, ...rows.map((r) => r[i]!.length)))
  const line = (cells: readonly string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i]!))
      .join(' | ')
      .trimEnd()
  return [
    line(result.columns),
    widths.map((w) => '-'.repeat(w)).join('-+-'),
    ...rows.map(line),
    `(${result.rows.length} row${result.rows.length === 1 ? '' : 's'})`,
  ].join('\n')
}
