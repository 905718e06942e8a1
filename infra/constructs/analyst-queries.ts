/**
 * Athena named queries for the analyst questions, as pure SQL builders. They read a device table and its
 * `<table>_latest` view; the column names are options because they come from the saved table's columns.
 */
import { CHANGES_VIEW_SUFFIX, LATEST_VIEW_SUFFIX, PARTITION_KEY } from '../../functions/export/constants.ts'

export interface AnalystQueryOptions {
  /** Table holding one row per device and export date. */
  readonly devicesTable: string
  /** @default 'hostname' */
  readonly keyColumn?: string
  /** @default 'operating_system' */
  readonly osColumn?: string
  /** A timestamp (or date) column. @default 'last_seen' */
  readonly lastSeenColumn?: string
  /** @default 30 */
  readonly notSeenDays?: number
  /** Tables with `tables[].key`: each gets "what changed since the previous export". @default none */
  readonly keyedTables?: readonly { readonly name: string; readonly key: readonly string[] }[]
}

/** One saved query: its name in the Athena console, what it answers, and the SQL. */
export interface AnalystQuery {
  readonly name: string
  readonly description: string
  readonly sql: string
}

const IDENTIFIER = /^[a-z_][a-z0-9_]*$/

/** "What changed since the previous export" for one keyed table, through its `<table>_changes` view. */
const changesQuery = ({ name, key }: { name: string; key: readonly string[] }): AnalystQuery => ({
  name: `What changed in ${name} since the previous export`,
  description: `Rows of ${name} added, removed or changed in today's export, against the export before it.`,
  sql: [
    `-- Rows added, removed or changed in today's export (put a date instead to look back).`,
    `-- A literal date (or current_date) lets Athena read just the two partitions compared.`,
    `SELECT * FROM ${name}${CHANGES_VIEW_SUFFIX}`,
    `WHERE ${PARTITION_KEY} = date_format(current_date, '%Y-%m-%d')`,
    `ORDER BY change, ${key.join(', ')}`,
  ].join('\n'),
})

/** The analyst questions, written against `options.devicesTable` and its latest view. */
export const analystQueries = (options: AnalystQueryOptions): readonly AnalystQuery[] => {
  const { devicesTable: table, keyColumn: key = 'hostname', osColumn: os = 'operating_system' } = options
  const { lastSeenColumn: lastSeen = 'last_seen', notSeenDays = 30 } = options
  for (const [field, value] of Object.entries({
    devicesTable: table,
    keyColumn: key,
    osColumn: os,
    lastSeenColumn: lastSeen,
  })) {
    if (!IDENTIFIER.test(value))
      throw new Error(`analyst queries: ${field} "${value}" is not a plain Athena identifier`)
  }
  if (!Number.isInteger(notSeenDays) || notSeenDays < 1)
    throw new Error(`analyst queries: notSeenDays must be a positive integer`)
  const latest = `${table}${LATEST_VIEW_SUFFIX}`
  return [
    {
      name: 'Latest inventory by operating system',
      description: `Devices in the newest export of ${table}, counted per ${os}.`,
      sql: [
        `-- Devices in the newest export, counted per operating system.`,
        `SELECT coalesce(CAST(${os} AS varchar), '(unknown)') AS ${os}, count(*) AS devices`,
        `FROM ${latest}`,
        `GROUP BY 1`,
        `ORDER BY devices DESC`,
      ].join('\n'),
    },
    {
      name: `Devices not seen for ${notSeenDays} days`,
      description: `Devices of the newest export of ${table} whose ${lastSeen} is more than ${notSeenDays} days ago, or empty.`,
      sql: [
        `-- Devices in the newest export that have not been seen for ${notSeenDays} days (or never).`,
        `SELECT ${key}, ${os}, ${lastSeen}`,
        `FROM ${latest}`,
        `WHERE ${lastSeen} IS NULL OR ${lastSeen} < localtimestamp - INTERVAL '${notSeenDays}' DAY`,
        `ORDER BY ${lastSeen} NULLS FIRST, ${key}`,
      ].join('\n'),
    },
    {
      name: 'Device changes between two dates',
      description: `Devices of ${table} added, removed or with another ${os} between two export dates (edit the dates).`,
      sql: [
        `-- Devices added, removed or whose ${os} changed between two export dates: edit the two dates.`,
        `WITH old_export AS (SELECT ${key}, ${os} FROM ${table} WHERE CAST(${PARTITION_KEY} AS varchar) = '2025-01-01'),`,
        `     new_export AS (SELECT ${key}, ${os} FROM ${table} WHERE CAST(${PARTITION_KEY} AS varchar) = '2025-02-01')`,
        `SELECT coalesce(n.${key}, o.${key}) AS ${key},`,
        `       CASE WHEN o.${key} IS NULL THEN 'added' WHEN n.${key} IS NULL THEN 'removed' ELSE 'changed' END AS change,`,
        `       o.${os} AS ${os}_before, n.${os} AS ${os}_after`,
        `FROM old_export o FULL OUTER JOIN new_export n ON n.${key} = o.${key}`,
        `WHERE o.${key} IS NULL OR n.${key} IS NULL OR n.${os} IS DISTINCT FROM o.${os}`,
        `ORDER BY change, ${key}`,
      ].join('\n'),
    },
    ...(options.keyedTables ?? []).map(changesQuery),
  ]
}
