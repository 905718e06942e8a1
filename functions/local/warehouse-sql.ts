/**
 * DuckDB over the local warehouse, with the names analysts use in Athena: one view per table (all dates,
 * `dt` as a string partition column, files read by column name like Athena reads Parquet) and its
 * `<table>_latest` view. DuckDB is a dev dependency: the local runner uses it, the Lambda never does.
 */
import path from 'node:path'
import { DuckDBInstance } from '@duckdb/node-api'
import { latestViewName } from '../export/catalog/athena.ts'
import { changesView, changesViewName, exportDates } from '../export/catalog/changes-view.ts'
import { readTableSchema } from '../export/catalog/registry.ts'
import { DATA_OBJECT_NAME, PARTITION_KEY, SCHEMAS_FOLDER } from '../export/constants.ts'
import { FolderWarehouseStore } from '../export/publish/fs.ts'

export interface QueryResult {
  readonly columns: readonly string[]
  readonly rows: readonly (readonly unknown[])[]
}

const quote = (identifier: string): string => `"${identifier.replace(/"/g, '""')}"`
const literal = (text: string): string => `'${text.replace(/'/g, "''")}'`

/** Tables of the warehouse: those with a schema in the registry. */
export const warehouseTables = async (root: string): Promise<string[]> => {
  const store = new FolderWarehouseStore(root)
  const keys = await store.listKeys(SCHEMAS_FOLDER)
  const names = keys.map((key) => path.posix.basename(key, '.json'))
  const tables: string[] = []
  for (const name of names) if (await readTableSchema(store, name)) tables.push(name)
  return tables.sort()
}

/** The statements that register a table and its latest view. */
export const tableViewStatements = (root: string, table: string): string[] => {
  const files = path.join(path.resolve(root), table, `${PARTITION_KEY}=*`, DATA_OBJECT_NAME)
  return [
    `CREATE OR REPLACE VIEW ${quote(table)} AS SELECT * FROM read_parquet(${literal(files)}, hive_partitioning = true, union_by_name = true, hive_types = {'${PARTITION_KEY}': VARCHAR})`,
    `CREATE OR REPLACE VIEW ${quote(latestViewName(table))} AS SELECT * FROM ${quote(table)} WHERE ${PARTITION_KEY} = (SELECT max(${PARTITION_KEY}) FROM ${quote(table)})`,
  ]
}

/** The table's `<table>_changes` view, when it has a key and two export dates to compare. */
export const changesViewStatement = async (root: string, table: string): Promise<string | undefined> => {
  const store = new FolderWarehouseStore(root)
  const schema = await readTableSchema(store, table)
  if (!schema?.key) return undefined
  const view = changesView({
    source: quote(table),
    columns: schema.columns,
    key: schema.key,
    exportDates: await exportDates(store, table),
  })
  return view && `CREATE OR REPLACE VIEW ${quote(changesViewName(table))} AS\n${view.sql}`
}

/** Runs `sql` with every table of the warehouse registered. Values come back JSON-friendly. */
export const queryWarehouse = async (root: string, sql: string): Promise<QueryResult> => {
  const instance = await DuckDBInstance.create(':memory:')
  const connection = await instance.connect()
  try {
    for (const table of await warehouseTables(root)) {
      for (const statement of tableViewStatements(root, table)) await connection.run(statement)
      const changes = await changesViewStatement(root, table)
      if (changes) await connection.run(changes)
    }
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
