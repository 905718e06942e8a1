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
  ExportError,
  FolderWarehouseStore,
  glueTableInputs,
  LOCAL_GLUE_DATABASE,
  localIcebergFiles,
  readTableSchema,
  SCHEMAS_FOLDER,
} from '../export/index.ts'
import { registerCatalog } from './duckdb-catalog.ts'
import type { QueryResult } from './query-formats.ts'

export type { QueryResult } from './query-formats.ts'

/** The Glue database the local catalog stands for. */
const LOCAL_DATABASE = LOCAL_GLUE_DATABASE

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
export const warehouseTableInputs = async (root: string, database = LOCAL_DATABASE): Promise<TableInput[]> =>
  (await warehouseCatalog(root, database)).inputs

/**
 * The definitions of every table that has a good one; a table whose registry cannot be read or whose definition
 * Glue would refuse is left out with its reason, so that it never breaks the queries on the others.
 */
const warehouseCatalog = async (root: string, database: string) => {
  const store = new FolderWarehouseStore(root)
  const inputs: TableInput[] = []
  const files = new Map<string, readonly (readonly [file: string, exportDate: string])[]>()
  const skipped: string[] = []
  const names = (await store.listKeys(SCHEMAS_FOLDER)).filter((key) => key.endsWith('.json'))
  for (const table of names.map((key) => path.posix.basename(key, '.json')).sort()) {
    try {
      const schema = await readTableSchema(store, table)
      if (schema === undefined) continue
      const definition = athenaTableDefinition(schema, database, `${path.join(store.root, table)}${path.sep}`)
      const tableInputs = glueTableInputs(definition)
      for (const input of tableInputs) assertGlueAccepts(input, schema.sourceTableId)
      inputs.push(...tableInputs)
      // An Iceberg table is read as Athena reads it: the files its current snapshot names, not its folders.
      const iceberg = await localIcebergFiles(store, table)
      if (iceberg)
        files.set(
          table,
          iceberg.map(({ key, exportDate }) => [path.join(store.root, key), exportDate]),
        )
    } catch (error) {
      if (!(error instanceof ExportError)) throw error
      skipped.push(`${table} is left out of the catalog: [${error.code}] ${error.message.replace(/\s*\n\s*/g, ' ')}`)
    }
  }
  return { inputs, files, skipped }
}

interface QueryOptions {
  /** The catalog to query through; the warehouse's own definitions when absent. */
  readonly inputs?: readonly TableInput[]
  /** What NOW means in projection ranges. @default the current time */
  readonly now?: Date
}

/** Runs `sql` with every table of the warehouse registered. Values come back JSON-friendly. */
export const queryWarehouse = async (root: string, sql: string, options: QueryOptions = {}): Promise<QueryResult> => {
  const { inputs, files, skipped } = options.inputs
    ? { inputs: options.inputs, files: new Map(), skipped: [] }
    : await warehouseCatalog(root, LOCAL_DATABASE)
  const instance = await DuckDBInstance.create(':memory:')
  const connection = await instance.connect()
  try {
    await registerCatalog(connection, LOCAL_DATABASE, inputs, options.now ?? new Date(), files)
    const reader = await connection.runAndReadAll(sql)
    return {
      columns: reader.columnNames(),
      columnTypes: reader.columnTypes().map(String),
      rows: reader.getRowsJson(),
      ...(skipped.length > 0 ? { skipped } : {}),
    }
  } finally {
    connection.closeSync()
    instance.closeSync()
  }
}
