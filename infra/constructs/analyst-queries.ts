/**
 * Athena named queries, as pure SQL builders. The generated ones fit any table: they read only the `dt` partition
 * and the lineage columns every table has, never a column of one saved table. Questions about a table's own columns
 * come from the configuration (`deployment.athena.namedQueries`).
 */
import { createHash } from 'node:crypto'
import { CHANGES_VIEW_SUFFIX, LATEST_VIEW_SUFFIX, LineageColumn, PARTITION_KEY } from '../../functions/export/index.ts'

/** One saved query: its name in the Athena console, what it answers, and the SQL. */
export interface AnalystQuery {
  readonly name: string
  readonly description: string
  readonly sql: string
}

const IDENTIFIER = /^[a-z_][a-z0-9_]*$/

/** The questions every table answers: rows per export date, a sample of the newest export, the days exported. */
export const tableQueries = (table: string): readonly AnalystQuery[] => {
  if (!IDENTIFIER.test(table)) throw new Error(`named queries: table "${table}" is not a plain Athena identifier`)
  const latest = `${table}${LATEST_VIEW_SUFFIX}`
  const { RUN_ID, EXPORTED_AT, ROW_NUMBER } = LineageColumn
  return [
    {
      name: `${table}: rows per export date`,
      description: `Rows of ${table} per export date, newest first, with the run that wrote each date.`,
      sql: [
        `-- Rows per export date, newest first, and the run that wrote each date.`,
        `SELECT ${PARTITION_KEY}, count(*) AS row_count, max(${RUN_ID}) AS export_run_id, max(${EXPORTED_AT}) AS exported_at`,
        `FROM ${table}`,
        `GROUP BY ${PARTITION_KEY}`,
        `ORDER BY ${PARTITION_KEY} DESC`,
        `LIMIT 90`,
      ].join('\n'),
    },
    {
      name: `${table}: sample of the latest export`,
      description: `The first 100 rows of the newest export of ${table}, in the order of the saved table.`,
      sql: [
        `-- The first 100 rows of the newest export, in the saved table's order.`,
        `SELECT *`,
        `FROM ${latest}`,
        `ORDER BY ${ROW_NUMBER}`,
        `LIMIT 100`,
      ].join('\n'),
    },
    {
      name: `${table}: days exported`,
      description: `How many export dates ${table} has, the first and the last.`,
      sql: [
        `-- How many export dates there are, the first and the last.`,
        `SELECT count(DISTINCT ${PARTITION_KEY}) AS days, min(${PARTITION_KEY}) AS first_day, max(${PARTITION_KEY}) AS last_day`,
        `FROM ${table}`,
      ].join('\n'),
    },
  ]
}

/** A table with `tables[].key`, which has a `<table>_changes` view. */
export interface KeyedTable {
  readonly name: string
  readonly key: readonly string[]
}

/** "What changed since the previous export" for one keyed table, through its `<table>_changes` view. */
export const changesQuery = ({ name, key }: KeyedTable): AnalystQuery => {
  for (const identifier of [name, ...key]) {
    if (!IDENTIFIER.test(identifier)) throw new Error(`named queries: "${identifier}" is not a plain Athena identifier`)
  }
  return {
    name: `${name}: what changed since the previous export`,
    description: `Rows of ${name} added, removed or changed in today's export, against the export before it.`,
    sql: [
      `-- Rows added, removed or changed in today's export (put a date instead to look back).`,
      `-- A literal date (or current_date) lets Athena read just the two partitions compared.`,
      `SELECT * FROM ${name}${CHANGES_VIEW_SUFFIX}`,
      `WHERE ${PARTITION_KEY} = date_format(current_date, '%Y-%m-%d')`,
      `ORDER BY change, ${key.join(', ')}`,
    ].join('\n'),
  }
}

/** Every named query of the warehouse: the generated ones per table, "what changed" per keyed table, the configured ones. */
export const namedQueries = (
  tables: readonly string[],
  configured: readonly { readonly name: string; readonly description?: string | undefined; readonly sql: string }[],
  keyed: readonly KeyedTable[] = [],
): readonly AnalystQuery[] => [
  ...tables.flatMap(tableQueries),
  ...keyed.map(changesQuery),
  ...configured.map(({ name, description, sql }) => ({ name, description: description ?? name, sql })),
]

/** A construct id that stays with the query's name, whatever queries come before it. */
export const namedQueryId = (query: AnalystQuery): string =>
  `Query${createHash('sha256').update(query.name).digest('hex').slice(0, 12)}`
