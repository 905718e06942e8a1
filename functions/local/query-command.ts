/**
 * `npm run query -- "SQL"`: SQL over the local warehouse with the names analysts use in Athena.
 * `npm run ddl`: the Athena DDL (tables with partition projection, latest views) for every registered table.
 */
import { type ParseArgsConfig, parseArgs } from 'node:util'
import {
  athenaTableDefinition,
  companionTables,
  createTableDdl,
  createViewDdl,
  ExportError,
  FolderWarehouseStore,
  QueryError,
  readTableSchema,
  tableViews,
  UsageError,
} from '../export/index.ts'
import { ExitCode } from './exit-code.ts'
import type { TerminalOutput } from './terminal.ts'

export const QUERY_USAGE = `Usage: npm run query -- [--out DIR] "SQL"

Runs SQL with DuckDB over the local warehouse, in UTC as Athena does. Every table is registered under its Athena
name (the export dates its projection range names, with the dt partition column) together with its <table>_latest
view, built from the Glue definitions the exporter sends, e.g.
  npm run query -- "SELECT operating_system, count(*) AS devices FROM devices_latest GROUP BY 1 ORDER BY 2 DESC"

Flags:
  --out DIR    the warehouse folder (default ./warehouse)
  -h, --help   this text`

export const DDL_USAGE = `Usage: npm run ddl -- [--out DIR] [--database NAME] [--location-root S3_URI]

Prints the Athena CREATE EXTERNAL TABLE (with partition projection) and CREATE VIEW statements for every table
in the warehouse's schema registry, for accounts that do not let the exporter write to Glue.

Flags:
  --out DIR              the warehouse folder whose registry to read (default ./warehouse)
  --database NAME        Glue database (default inventory)
  --location-root URI    where the tables live in S3 (default s3://YOUR-BUCKET/inventory)
  -h, --help             this text`

/** parseArgs, with its errors as usage errors. */
export const parseFlags = <T extends ParseArgsConfig>(config: T) => {
  try {
    return parseArgs(config)
  } catch (error) {
    throw new UsageError((error as Error).message)
  }
}

const HELP = { type: 'boolean', short: 'h' } as const

export const runQueryCommand = async (argv: readonly string[], output: TerminalOutput): Promise<ExitCode> => {
  const { values, positionals } = parseFlags({
    args: [...argv],
    allowPositionals: true,
    options: { out: { type: 'string' }, help: HELP },
  })
  if (values.help) {
    output.out(QUERY_USAGE)
    return ExitCode.OK
  }
  if (positionals.length !== 1) throw new UsageError('give exactly one SQL statement, in quotes')
  const root = values.out ?? 'warehouse'
  try {
    // Loaded only here: DuckDB's native library is tens of MB of resident memory that the other commands do not need.
    const { queryWarehouse, renderResult } = await import('./warehouse-sql.ts')
    output.out(renderResult(await queryWarehouse(root, positionals[0]!)))
    return ExitCode.OK
  } catch (error) {
    if (error instanceof ExportError) throw error
    throw new QueryError((error as Error).message)
  }
}

export const runDdlCommand = async (argv: readonly string[], output: TerminalOutput): Promise<ExitCode> => {
  const { values, positionals } = parseFlags({
    args: [...argv],
    allowPositionals: true,
    options: { out: { type: 'string' }, database: { type: 'string' }, 'location-root': { type: 'string' }, help: HELP },
  })
  if (values.help) {
    output.out(DDL_USAGE)
    return ExitCode.OK
  }
  if (positionals.length > 0) throw new UsageError(`unexpected argument "${positionals[0]}"`)
  const store = new FolderWarehouseStore(values.out ?? 'warehouse')
  const database = values.database ?? 'inventory'
  const locationRoot = (values['location-root'] ?? 's3://YOUR-BUCKET/inventory').replace(/\/+$/, '')
  const { warehouseTables } = await import('./warehouse-sql.ts')
  const tables = await warehouseTables(store.root)
  if (tables.length === 0) throw new UsageError(`no table has been exported to ${store.root} yet; run npm start first`)
  const statements: string[] = []
  for (const table of tables) {
    const schema = (await readTableSchema(store, table))!
    const definition = athenaTableDefinition(schema, database, `${locationRoot}/${table}/`)
    statements.push(
      `-- ${table}: saved table ${schema.sourceTableId}`,
      ...[definition, ...companionTables(definition)].flatMap((each) => [createTableDdl(each), '']),
      ...tableViews(definition).flatMap((view) => [createViewDdl(definition, view), '']),
    )
  }
  output.out(statements.join('\n').trimEnd())
  return ExitCode.OK
}
