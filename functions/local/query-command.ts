/**
 * `npm run query -- "SQL"`: SQL over the local warehouse with the names analysts use in Athena.
 * `npm run ddl`: the Athena DDL (tables with partition projection, latest views) for every registered table, or those
 * `--table` names.
 */
import path from 'node:path'
import {
  athenaTableDefinition,
  companionTables,
  createTableDdl,
  createViewDdl,
  ExportError,
  FolderWarehouseStore,
  localIcebergFiles,
  QueryError,
  readTableSchema,
  tableViews,
  UsageError,
  WarehouseEmptyError,
} from '../export/index.ts'
import { ExitCode } from './exit-code.ts'
import { type FlagSpecs, flagHelp, HELP_FLAG, parseFlags } from './flags.ts'
import { publishedTable, publishedTables } from './published-tables.ts'
import { type QueryResult, renderCsv, renderJson, renderResult } from './query-formats.ts'
import type { TerminalOutput } from './terminal.ts'
import { localWarehouseFolder, openWarehouse, parseWarehouseTarget } from './warehouse-target.ts'

const QUERY_FORMATS = ['table', 'csv', 'json'] as const
type QueryFormat = (typeof QUERY_FORMATS)[number]

const OUT_FLAG = { type: 'string', value: 'DIR', help: 'the warehouse folder (default ./warehouse)' } as const

const QUERY_FLAGS = {
  out: OUT_FLAG,
  format: {
    type: 'string',
    value: 'table|csv|json',
    help: 'table: aligned text, long cells clipped (default); csv: RFC 4180 with a header line;\njson: an array of objects, one per row',
  },
  help: HELP_FLAG,
} as const satisfies FlagSpecs

const DDL_FLAGS = {
  out: {
    ...OUT_FLAG,
    value: 'DIR|s3://BUCKET[/PREFIX]',
    help: 'the warehouse whose registry to read: a folder (default ./warehouse), or S3 with your\nAWS credentials (then also the default --location-root)',
  },
  table: {
    type: 'string',
    multiple: true,
    value: 'NAME|ID',
    help: 'only this published table, by its name or its saved table id (repeatable)',
  },
  database: { type: 'string', value: 'NAME', help: 'Glue database (default inventory)' },
  'location-root': {
    type: 'string',
    value: 'S3_URI',
    help: 'where the tables live in S3, an s3:// URL (default: the s3:// --out, else\ns3://YOUR-BUCKET/inventory)',
  },
  help: HELP_FLAG,
} as const satisfies FlagSpecs

const QUERY_USAGE = `Usage: npm run query -- [--out DIR] [--format table|csv|json] "SQL"

Runs SQL with DuckDB over the local warehouse, in UTC as Athena does. Every table is registered under its Athena
name (the export dates its projection range names, with the dt partition column) together with its <table>_latest
view, built from the Glue definitions the exporter sends, e.g.
  npm run query -- "SELECT operating_system, count(*) AS devices FROM devices_latest GROUP BY 1 ORDER BY 2 DESC"
  npm run query -- --format csv "SELECT * FROM users_latest" > users.csv

${flagHelp(QUERY_FLAGS)}

Exit status: 0 the query ran; 1 the SQL failed or nothing has been exported yet; 2 bad usage.`

/** Where the DDL says the tables live: an s3:// URL, by default the bucket and prefix read (or a placeholder). */
const ddlLocationRoot = (flag: string | undefined, s3Root: string | undefined): string => {
  if (flag === undefined) return s3Root ?? 's3://YOUR-BUCKET/inventory'
  if (!/^s3:\/\/[a-z0-9][a-z0-9.-]{1,61}[a-z0-9](\/.*)?$/.test(flag)) {
    throw new UsageError(
      `--location-root must be an s3:// URL (s3://BUCKET/PREFIX), got "${flag}"`,
      'write it as Athena reads a LOCATION, e.g. --location-root s3://acme-lake/inventory',
    )
  }
  return flag.replace(/\/+$/, '')
}

const DDL_USAGE = `Usage: npm run ddl -- [--out DIR|s3://BUCKET[/PREFIX]] [--table NAME|ID]... [--database NAME]
                   [--location-root S3_URI]

Prints the Athena CREATE EXTERNAL TABLE (with partition projection) and CREATE VIEW statements for every table
in the warehouse's schema registry (or the --table ones), for accounts that do not let the exporter write to Glue.

${flagHelp(DDL_FLAGS)}`

export const runQueryCommand = async (argv: readonly string[], output: TerminalOutput): Promise<ExitCode> => {
  const { values, positionals } = parseFlags(QUERY_FLAGS, argv, { positionals: true })
  if (values.help) {
    output.out(QUERY_USAGE)
    return ExitCode.OK
  }
  const format = values.format ?? 'table'
  if (!(QUERY_FORMATS as readonly string[]).includes(format)) {
    throw new UsageError(`--format must be one of ${QUERY_FORMATS.join(', ')}, got "${format}"`)
  }
  if (positionals.length !== 1) throw new UsageError('give exactly one SQL statement, in quotes')
  const root = localWarehouseFolder(values.out, {
    command: 'npm run query',
    hint: "query the deployed tables in Athena (the stack's workgroup), or export to a folder (--out DIR) and query that",
  })
  // Loaded only here: DuckDB's native library is tens of MB of resident memory that the other commands do not need.
  const sql = await import('./warehouse-sql.ts')
  let result: Awaited<ReturnType<typeof sql.queryWarehouse>>
  try {
    result = await sql.queryWarehouse(root, positionals[0]!)
  } catch (error) {
    if (error instanceof ExportError) throw error
    // DuckDB's "Table with name devices does not exist! Did you mean duckdb_views?" misleads before any export.
    if ((await sql.warehouseTables(root)).length === 0) throw new WarehouseEmptyError(path.resolve(root))
    throw new QueryError((error as Error).message)
  }
  for (const skipped of result.skipped ?? []) output.err(`warning: ${skipped}`)
  output.out(RENDERERS[format as QueryFormat](result))
  return ExitCode.OK
}

const RENDERERS = {
  table: (result: QueryResult) => renderResult(result),
  csv: (result: QueryResult) => renderCsv(result),
  json: (result: QueryResult) => renderJson(result),
} as const

export const runDdlCommand = async (argv: readonly string[], output: TerminalOutput): Promise<ExitCode> => {
  const { values } = parseFlags(DDL_FLAGS, argv)
  if (values.help) {
    output.out(DDL_USAGE)
    return ExitCode.OK
  }
  // The registry is read where the exporter wrote it: a folder, or the deployed bucket with your credentials.
  const target = parseWarehouseTarget({ out: values.out })
  const store = target.kind === 'folder' ? new FolderWarehouseStore(target.folder) : (await openWarehouse(target)).store
  const database = values.database ?? 'inventory'
  const locationRoot = ddlLocationRoot(values['location-root'], target.kind === 'folder' ? undefined : store.root)
  const published = await publishedTables(store)
  if (published.length === 0) throw new WarehouseEmptyError(store.root)
  const tables =
    values.table === undefined
      ? published.map((t) => t.name)
      : [...new Set(await Promise.all(values.table.map(async (flag) => (await publishedTable(flag, store)).name)))]
  const statements: string[] = []
  for (const table of tables) {
    if ((await localIcebergFiles(store, table)) !== undefined) {
      // Hive DDL over its folders would read replaced files too; Athena knows an Iceberg table through Glue alone.
      statements.push(
        `-- ${table}: an Iceberg table (docs/iceberg.md): Athena reads it through the Glue catalog only, so no DDL is printed for it`,
        '',
      )
      continue
    }
    const schema = (await readTableSchema(store, table))!
    const definition = athenaTableDefinition(schema, database, `${locationRoot}/${table}/`)
    statements.push(
      `-- ${table}: saved table ${schema.sourceTableId}`,
      ...[definition, ...companionTables(definition)].flatMap((each) => [createTableDdl(each), '']),
      ...tableViews(definition).flatMap((view) => [
        ...(view.name.endsWith('_latest')
          ? [
              `-- ${view.name} reads dt='${definition.latestDate}', the newest date exported when this was printed: after each export, run npm run ddl again and apply this view (the Lambda's Glue catalog does it by itself)`,
            ]
          : []),
        createViewDdl(definition, view),
        '',
      ]),
    )
  }
  output.out(statements.join('\n').trimEnd())
  return ExitCode.OK
}
